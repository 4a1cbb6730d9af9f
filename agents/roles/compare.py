"""Comparison answers computed from two findings: "which came first, X or Y", "are X and Y from the same country".

The planner names the comparison (``PlanOut.compare``: an operator and, for a which-question, its two options);
the plan's last two steps find the two values; this module reads them (dates, numbers, names) and compares them
in code. A 1.5B model comparing two dates in its head is where its comparison answers go wrong. Anything read
without confidence (no year, two dates of one year at year precision, a tie) gives ``None``: the answerer LLM
then answers as it would have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from dateutil import parser as dateparser

from agents.roles.checks import is_choice

ORDERING = ("earlier", "later", "more", "less")
"""Operators that pick one of two options."""

_YEAR = re.compile(r"(?<![\d.,])\d{3,4}(?![\d.,])")
_MONTH = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b\d{4}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_BASE = datetime(1, 1, 1)


@dataclass(frozen=True)
class Day:
    """A date read from an answer, and whether it named more than a year."""

    value: datetime
    month_known: bool


def read_date(text: str) -> Day | None:
    """The date an answer states ("15 January 1842", "March 27, 1989", "1898"), or None without a year in it."""
    years = {int(y) for y in _YEAR.findall(text)}
    if not years:
        return None
    try:
        value = dateparser.parse(text, fuzzy=True, default=_BASE)
    except (ValueError, OverflowError):
        return None
    if value.year not in years:  # the parser took some other number for the year
        return None
    return Day(value=value, month_known=bool(_MONTH.search(text)))


def read_number(text: str) -> float | None:
    """The first number an answer states ("3,200 km" -> 3200.0), or None."""
    m = _NUMBER.search(text)
    return float(m.group().replace(",", "")) if m else None


def _words(text: str) -> str:
    words = re.sub(r"[^\w\s]", " ", text.casefold()).split()
    return " ".join(words[1:] if words[:1] == ["the"] else words)


def same(a: str, b: str) -> bool | None:
    """Do two answers name the same thing ("France" / "france", "United States" / "the United States of America")?"""
    x, y = _words(a), _words(b)
    if not x or not y:
        return None
    return x == y or f" {x} " in f" {y} " or f" {y} " in f" {x} "


def _order(op: str, a: str, b: str) -> int | None:
    """0 when ``a`` is the pick of ``op``, 1 when ``b`` is, None when unreadable or tied."""
    if op in ("earlier", "later"):
        da, db = read_date(a), read_date(b)
        if da is None or db is None:
            return None
        coarse = not (da.month_known and db.month_known)
        if da.value == db.value or (coarse and da.value.year == db.value.year):
            return None
        first = 0 if da.value < db.value else 1
        return first if op == "earlier" else 1 - first
    na, nb = read_number(a), read_number(b)
    if na is None or nb is None or na == nb:
        return None
    bigger = 0 if na > nb else 1
    return bigger if op == "more" else 1 - bigger


def combine(op: str, options: list[str], values: tuple[str, str]) -> str | None:
    """The answer ``op`` gives over two findings: ``yes``/``no`` for ``same``; for an ordering operator, the option
    (``options[i]`` goes with ``values[i]``) that is earlier / later / more / less. None: let the LLM answer."""
    a, b = values
    if op == "same":
        verdict = same(a, b)
        return None if verdict is None else ("yes" if verdict else "no")
    if op not in ORDERING or len(options) != 2 or not all(o.strip() for o in options):
        return None
    pick = _order(op, a, b)
    return None if pick is None else options[pick].strip()


_REF = re.compile(r"#\d+")
_STOP_WORDS = (
    "a an and are as at be both by did do does for from had has have how in is it of on or same than that the their "
    "to was were what when where which who whom whose why with"
)
_STOP = frozenset(_STOP_WORDS.split())


def _swap(text: str, old: str, new: str) -> str:
    return re.sub(re.escape(old), lambda _: new, text, count=1, flags=re.IGNORECASE)


def mirror(steps: list[str], options: list[str]) -> list[str] | None:
    """Repair a comparison plan whose steps do not ask one thing of each option: small models copy a pattern's
    placeholder ("When was #1 born?" as the first step) or restate the question as the second step. The step that
    names one option (or, failing that, whose ``#n`` points at no earlier step: the placeholder) is asked again of
    the other option. None when the plan already asks of each option, or when no step can be mirrored."""
    if len(options) != 2 or len(steps) != 2:
        return None
    named = [[mentions(s, o) for o in options] for s in steps]
    if sorted(map(tuple, named)) == [(False, True), (True, False)]:
        return None  # already one option each
    for k, step in enumerate(steps):
        if named[k].count(True) == 1:
            mine = named[k].index(True)
            template, own, other = step, options[mine], options[1 - mine]
            break
    else:
        bad = [step for k, step in enumerate(steps) if any(int(r[1:]) - 1 >= k for r in _REF.findall(step))]
        if not bad:
            return None
        ref = _REF.search(bad[0])
        assert ref is not None
        template, own, other = _swap(bad[0], ref.group(), options[0]), options[0], options[1]
    pair = [template, _swap(template, own, other)]
    return pair if mentions(pair[0], options[0]) else pair[::-1]  # in the options' order


_DIRECTIONS: dict[str, frozenset[str]] = {
    op: frozenset(words.split())
    for op, words in {
        "earlier": "older oldest elder eldest earlier earliest first sooner",
        "later": "younger youngest later latest last newer newest recent",
        "more": "more most larger largest bigger biggest greater greatest higher highest longer longest taller tallest "
        "older oldest",
        "less": "less least fewer fewest smaller smallest lower lowest shorter shortest younger youngest",
    }.items()
}
"""The comparative words that name each ordering operator ("Who is older" asks for the earlier birth date, or the
larger age)."""
_FAMILIES = (("earlier", "later"), ("more", "less"))


def named_op(question: str, op: str, options: list[str]) -> str | None:
    """The ordering operator the question's own comparative word names, in ``op``'s family (dates: earlier / later;
    numbers: more / less), or None when it names neither direction or both ("first ... later"). The options' own
    words are left out ("The Last Samurai" names no direction). A 1.5B planner copies a pattern's operator
    ("younger" -> later) onto a question that asks the other way round ("Who is older ...")."""
    family = next((f for f in _FAMILIES if op in f), None)
    if family is None:
        return None
    text = f" {_words(question)} "
    for option in options:
        name = _words(option)
        if name:
            text = text.replace(f" {name} ", " ")
    words = set(text.split())
    if "recent" in words:  # "more recent" names a later date, not a larger number
        words -= {"more", "most"}
    named = [d for d in family if words & _DIRECTIONS[d]]
    return named[0] if len(named) == 1 else None


_POLAR_WORDS = "am are is was were do does did have has had can could will would shall should may might must"
_POLAR = frozenset(_POLAR_WORDS.split())


def applies(question: str, op: str, options: list[str], *, chained: bool, choice_only: bool = False) -> bool:
    """Is the planner's comparison one the question asks? The last step must not build on the one before it (the
    two sides of a comparison are looked up apart: "Where was #1 born?" after "Who directed X?" is a chain,
    ``chained``); a ``same`` needs a yes/no question (it opens with an auxiliary verb); an ordering needs two
    options, both named in the question, and with ``choice_only`` an either/or question (``is_choice``: "How did
    the people fare under the abolisher of sati partha?" names two phrases, compares nothing). Small models copy a
    ``compare`` from the plan patterns onto questions that compare nothing."""
    if chained:
        return False
    words = _words(question).split()
    if op == "same":
        return bool(words) and words[0] in _POLAR
    if choice_only and not is_choice(question):
        return False
    return op in ORDERING and len(options) == 2 and all(mentions(question, o) for o in options)


def covers(question: str, steps: list[str]) -> bool:
    """Do the steps ask everything the question names? Every content word of the question appears in one of them.
    "Are X and Y both from the same country?" over "Which country is X from?" / "... Y from?" does; "Do the
    directors of X and Y share a nationality?" over "Who directed X?" / "Who directed Y?" does not (nobody asked
    the nationality), so its two answers are not the ones to compare."""
    asked = set(_words(" ".join(steps)).split())
    return all(w in asked for w in _words(question).split() if w not in _STOP)


def mentions(text: str, name: str) -> bool:
    """Does ``text`` name ``name`` (case and punctuation aside)?"""
    n = _words(name)
    return bool(n) and f" {n} " in f" {_words(text)} "
