"""A factoid answer cut to the short phrase it asks for, where that phrase can be found without a model: a date
question answered with a sentence ("Tina Arena was born on 1 November 1967") keeps its one date ("1 November
1967"), and a sentence that restates the question around its answer ("The Finnish markka predated the Euro in the
country Signmark is from") keeps what the question does not already say ("The Finnish markka"). Pure, no LLM call:
the small model restates its passage or the question around the answer, and a factoid's answer is the short phrase
(the system prompt asks for that; the multi-hop scorers count every extra word)."""

from __future__ import annotations

import re

from agents.roles.checks import MONTH_NAMES, SHORT_ANSWER_WORDS, asks_date, is_choice, tokens

_MONTH = rf"(?:{MONTH_NAMES})\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"\d{1,4}(?:\s*(?:BC|BCE|AD|CE)\b)?"
_DATE = re.compile(
    rf"(?<![\d,.])\b(?:{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}"  # 1 November 1967, 1st of May, 1990
    rf"|{_MONTH}\s+{_DAY},?\s+{_YEAR}"  # March 27, 1989
    rf"|{_MONTH}\s+{_YEAR}"  # November 1967
    rf"|\d{{3,4}}s"  # 1920s
    rf"|{_DAY}\s+century(?:\s*(?:BC|BCE|AD|CE)\b)?"  # 19th century
    rf"|\d{{1,4}}\s*(?:BC|BCE|AD|CE)\b|(?:AD\s+)?\d{{3,4}})(?!\w)",  # 44 BC, 1984
    re.IGNORECASE,
)


def dates(text: str) -> list[str]:
    """The date phrases ``text`` states, longest forms first where they overlap, in order."""
    return [m.group().strip() for m in _DATE.finditer(text)]


def date_answer(answer: str, question: str) -> str:
    """``answer`` cut to its one date when ``question`` asks for a date and ``answer`` says more than that date;
    else ``answer`` unchanged (several dates, none, or the date alone)."""
    if not asks_date(question):
        return answer
    found = dates(answer)
    if len(set(found)) != 1:
        return answer
    date = found[0]
    return date if answer.strip().rstrip(".") != date else answer


# A restatement is a clause, a verb with its object or subject ("predated the Euro", "is the default escape
# character"); one or two of the question's words at an end are as likely part of the answer's own name ("Rutgers
# University" for "Which university ...").
RESTATED_MIN_TOKENS = 3
"""Content tokens a cut-off end must hold, each one the question's own, to be a restatement of it."""
_ARTICLES = frozenset({"a", "an", "the"})
_INNER_STOP = re.compile(r"(?<!\b[A-Z])(?<!\b[A-Z][a-z])[.!?;]\s+\S")
"""A sentence break inside the answer: several sentences are not one restated question."""
_EDGE = " \t,;:-\u2013\u2014"


_INFLECTION = re.compile(r"(?:ed|es|e|d|s)$")
"""An ending left out before the cut, so that "died" restates "die" (a 5-letter cut alone keeps them apart)."""


def _stems(text: str) -> set[str]:
    """Content tokens without an inflected ending, cut to 5 letters, so that "founded" restates "found",
    "predated" "predate" and "died" "die"."""
    return {(_INFLECTION.sub("", t) if len(t) > 2 else t)[:5] for t in tokens(text)}


def _in_name(before: str, after: str) -> bool:
    """True when two neighbouring words belong to one name: both capitalised, no comma or colon between them."""
    return (
        (before[:1].isupper() or before[:1].isdigit())
        and not before.endswith((",", ";", ":"))
        and (after[:1].isupper() or after[:1].isdigit())
    )


def unrestated(answer: str, question: str, *, min_tokens: int = RESTATED_MIN_TOKENS) -> str:
    """``answer`` without the words at either end that only restate ``question`` ("The default escape character in
    a LIKE pattern is the backslash" → "the backslash"; "match.groups() returns a tuple of all the subgroups" →
    "match.groups()"); else ``answer`` unchanged.

    An end is cut only when it holds at least ``min_tokens`` content tokens, each one the question's own (compared
    on 5-letter stems), and what is left says something the question does not and is a short phrase inside the
    restatement: no more content tokens than were cut off, and at most ``SHORT_ANSWER_WORDS`` (the first pass's
    limit for a short answer). A cut never splits a run of capitalised words (a name). One sentence only. An
    either/or question is left alone: its answer is one of the names it gives, so what "says something new" cannot
    be told from the words."""
    body = answer.strip().rstrip(".").strip()
    if not body or _INNER_STOP.search(body) or is_choice(question):
        return answer
    spans = [m.span() for m in re.finditer(r"\S+", body)]
    words = [body[a:b] for a, b in spans]
    toks = [_stems(w) for w in words]
    asked = _stems(question)

    def says_new(ws: list[set[str]]) -> bool:
        return any(w - asked for w in ws)

    def restated(ws: list[set[str]]) -> bool:
        return all(w <= asked for w in ws) and sum(len(w) for w in ws) >= min_tokens

    start, end = 0, len(words)
    # a head that restates the question: the longest run of its words, the article that ends it left to the answer
    heads = [j for j in range(len(words) - 1, 0, -1) if all(w <= asked for w in toks[:j])]
    if heads:
        j = heads[0]
        while j > 0 and words[j - 1].lower() in _ARTICLES:
            j -= 1  # "is the backslash" keeps "the backslash"; "the mayor of New York City" keeps "New York City"
        while 0 < j < len(words) and _in_name(words[j - 1], words[j]):
            j -= 1  # inside a name: keep all of it
        if j and restated(toks[:j]) and says_new(toks[j:]):
            start = j
    # a tail that restates it: the longest run of its words after what the answer says
    tails = [i for i in range(start + 1, len(words)) if all(w <= asked for w in toks[i:])]
    if tails:
        i = tails[0]
        while i < len(words) and _in_name(words[i - 1], words[i]):
            i += 1  # inside a name: keep all of it
        if i < len(words) and restated(toks[i:]) and says_new(toks[start:i]):
            end = i
    kept = sum(len(w) for w in toks[start:end])
    cut_off = sum(len(w) for w in toks) - kept
    if (start, end) == (0, len(words)) or kept > min(cut_off, SHORT_ANSWER_WORDS):
        return answer  # nothing restated, or what is left is not a short phrase inside a restatement
    cut = body[spans[start][0] : spans[end - 1][1]].strip(_EDGE)
    return cut or answer


def short_answer(answer: str, question: str) -> str:
    """``answer`` as the short phrase a factoid asks for: a date question's one date (``date_answer``), else the
    answer without the question it restates (``unrestated``); else ``answer`` unchanged."""
    dated = date_answer(answer, question)
    return dated if dated != answer else unrestated(answer, question)
