"""Free, deterministic checks of what a role answered, before the agent accepts it (no LLM call).

A sub-answer read off by the grader is accepted only when it is non-empty, grounded in the evidence kept for it,
more than an entity its sub-question already names, and not the answer of the earlier step it builds on. A final
answer must not be a bridge answer (an intermediate step's answer) nor "not found" while evidence was kept. With
``agent.check_chain``, a chained step's answer (the final one included) must be stated in a kept passage that also
names the answer it builds on, and a final answer must be grounded in the kept evidence. With
``agent.check_grounded`` (the default) a short final answer must occur in some evidence the run retrieved. Each
check returns the reason it failed (shown in the trace, and the correction's ``reason``), or ``""`` to accept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from agents.roles.hop import described_span

UNGROUNDED_FINAL = "answer is in none of the retrieved passages"
"""The final check's reason (``agent.check_grounded``): the model answered from memory, not from the evidence."""
GROUNDED_SHARE = 0.5
"""Share of an answer's content tokens that must occur in the kept evidence for it to count as grounded."""
# "Christopher Nolan" passes with one of its two words in the evidence; an "Ernst Mach" it never names fails.

_STOP_WORDS = (
    "a an the of in on at to for by and or is was are were be been it its this that with from as who what which "
    "when where how why whom whose did does do has have had"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
YES_NO = frozenset({"yes", "no"})
"""The words of a yes/no answer (its content tokens, as ``tokens`` gives them)."""
_YES_NO_WORD = re.compile(r"^\s*(?:yes|no)\s*(?:$|[.,;:!\[])", re.IGNORECASE)
"""A bare yes/no answer ("No [E2]", "Yes, both are"; not "No Doubt")."""


def tokens(text: str) -> list[str]:
    """Normalised content tokens: accents folded, lower case, alphanumeric runs, stop words left out."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return [t for t in re.findall(r"[a-z0-9]+", folded) if t not in _STOP]


def same_answer(a: str, b: str) -> bool:
    """True when two answers have the same content tokens (case, accents, punctuation and stop words aside)."""
    ta, tb = tokens(a), tokens(b)
    return bool(ta) and ta == tb


def grounded(answer: str, evidence_texts: Iterable[str]) -> bool:
    """True when at least ``GROUNDED_SHARE`` of the answer's content tokens occur in the evidence (yes/no: always)."""
    words = set(tokens(answer))
    if not words or words <= YES_NO:
        return True
    seen: set[str] = set()
    for text in evidence_texts:
        seen.update(tokens(text))
    return len(words & seen) >= GROUNDED_SHARE * len(words)


def names_something(text: str) -> bool:
    """True when ``text`` names an entity of its own: a capitalised word after its first, a number, or a quote.

    "When was Kestrel Ford born?" names one; "Where was that director born?" names none (it leans on an earlier
    step's answer).
    """
    words = re.findall(r"[^\W\d_][\w'-]*|\d+", text)
    return any(w[0].isdigit() or w[0].isupper() for w in words[1:]) or bool(re.search(r"[\"“«]", text))


_OR_IDIOMS = re.compile(r"\bor (?:equal|more|fewer|less|so)\b|\bwhether or not\b|\band/or\b", re.IGNORECASE)
"""An "or" that offers no options: "greater than or equal to", "one or more", "whether or not", "and/or"."""


_OR = re.compile(r"\bor\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,:;]")
_OPTION_START = re.compile(r"[\"'\u201c\u2018\u00ab(]?[A-Z0-9\u00c0-\u00de]")
"""A named option's first word: a capital, a digit or an opening quote."""
_ARTICLE = re.compile(r"(?:the|an?)\s+", re.IGNORECASE)


def offers_options(text: str, at: re.Match[str]) -> bool:
    """Does the "or" at ``at`` join two options? They end the question, after its last comma or colon ("Which film
    came out first, Dune or Alien?"); or both are names: the word before it and the one after it (an article
    skipped) are capitalised, numbers or quoted ("Was Angus Wagner or Juan Carlos Falcón born first?")."""
    before, after = text[: at.start()], text[at.end() :]
    if _CLAUSE_BREAK.search(before) and not _CLAUSE_BREAK.search(after):
        return True
    prev = before.split()[-1:] or [""]
    rest = after.strip()
    if m := _ARTICLE.match(rest):
        rest = rest[m.end() :]
    return bool(_OPTION_START.match(prev[0]) and _OPTION_START.match(rest))


def is_choice(question: str) -> bool:
    """True for an either/or question, whose answer is one of the options it names: an "or" that joins options
    (``offers_options``), or any "or" of a question in yes/no form ("Is the river longer than the canal or not?").
    An "or" inside an idiom that offers no options (``_OR_IDIOMS``) does not count, nor one inside a clause that
    lists alternatives of a description ("a file moved to the trash or recycle bin", "created or updated")."""
    text = _OR_IDIOMS.sub(" ", question)
    ors = list(_OR.finditer(text))
    return bool(ors) and (asks_yes_no(question) or any(offers_options(text, m) for m in ors))


_YES_NO_QUESTION = re.compile(r"^\W*(?:is|are|was|were|do|does|did|has|have|had)\s+(?!you\b|i\b|we\b)\w", re.IGNORECASE)
"""A question in yes/no form: it opens with a form of be / do / have ("Are both ...", "Did X ..."), not a request
addressed to the assistant ("Do you have ...": that one may want prose)."""


def asks_yes_no(question: str) -> bool:
    """True for a question in yes/no form (``_YES_NO_QUESTION``)."""
    return bool(_YES_NO_QUESTION.match(question))


def comparison_form(question: str) -> str:
    """Why the question's form alone means ``check_first_pass`` would not accept a first pass's answer, or ``""``:
    a yes/no question concludes yes or no (planned, each side looked up), an either/or one is answered with a name
    it gives (planned, the options compared). The first pass's call is skipped for these (its search still runs):
    the call would only be replanned."""
    if asks_yes_no(question):
        return "a yes/no question: its conclusion is planned, each side looked up"
    if is_choice(question):
        return "an either/or question: its options are planned and compared"
    return ""


_PROSE_OPENERS = (
    r"summari[sz]e|explain|describe|outline|discuss|compare|contrast|list|give|tell|why\b",
    r"how (?:do|does|did|can|could|should|would|to|is|are|was|were)\b",
    r"what (?:is|are) the (?:differences?|steps|advantages|disadvantages|benefits|purpose|role)\b",
)
_PROSE_OPENING = re.compile(r"^\W*(?:" + "|".join(_PROSE_OPENERS) + ")", re.IGNORECASE)
"""A question that opens as a request for a summary, explanation or how-to ("Summarise ...", "Why ...", "How do
I ...", "What are the steps ..."); "How many / long / old ..." ask for a number."""
_PROSE_ASKED = re.compile(
    r"\b(?:in (?:one|a|two|three|a few|few) sentences?|summar(?:y|ise|ize)|overview|explain)\b", re.IGNORECASE
)
"""A request for prose anywhere in the question ("... in one sentence", "an overview of ...")."""


def prose_form(question: str) -> bool:
    """True when the question's form may ask for prose rather than a name, date, number or yes/no (the first pass
    then lets its combined call choose the answer's kind; ``agent.first_pass_answer``)."""
    return bool(_PROSE_OPENING.search(question) or _PROSE_ASKED.search(question))


def stated_with(answer: str, bridge: str, evidence_texts: Iterable[str]) -> bool:
    """True when one passage both grounds ``answer`` and names ``bridge`` (one of its content tokens): the fact
    "#1 was born on D" is stated where #1 is named, not read off a passage about someone else."""
    names = set(tokens(bridge))
    return not names or any(grounded(answer, [text]) and names & set(tokens(text)) for text in evidence_texts)


def check_chain(answer: str, *, builds_on: Sequence[str], run_texts: Sequence[str]) -> str:
    """Why a chained step's answer is not accepted, or ``""``: no kept passage of the run states it together with
    the answer it builds on (yes/no answers aside)."""
    if not builds_on or set(tokens(answer)) <= YES_NO:
        return ""
    if any(stated_with(answer, bridge, run_texts) for bridge in builds_on):
        return ""
    return "no kept passage states the answer together with the entity it builds on"


def check_subanswer(answer: str, *, subq: str, evidence_texts: Sequence[str], builds_on: Sequence[str] = ()) -> str:
    """Why the grader's answer to ``subq`` is not accepted, or ``""``.

    ``builds_on``: answers of the earlier steps this one refers to (its ``#n`` references, or the answers the first
    query carried). Two steps of a comparison plan may share an answer ("American" twice); a chained step whose
    answer is the one it started from bridged nothing.
    """
    if not tokens(answer) and answer.strip().lower() not in YES_NO:
        return "empty answer"
    if not grounded(answer, evidence_texts):
        return "answer not found in the kept evidence"
    if not is_choice(subq) and set(tokens(answer)) <= set(tokens(subq)):
        return "answer only repeats an entity the sub-question names"
    if any(same_answer(answer, earlier) for earlier in builds_on):
        return "answer repeats the earlier answer this step builds on"
    return ""


def check_final(answer: str, *, not_found: bool, bridges: Sequence[str], kept_evidence: bool) -> str:
    """Why a final answer is not accepted, or ``""``: a bridge answer given as the answer, or "not found" although
    the run kept evidence for its question."""
    if not_found:
        return "not found although evidence was kept" if kept_evidence else ""
    if any(same_answer(answer, bridge) for bridge in bridges):
        return "answer repeats an intermediate answer instead of answering the question"
    return ""


# A leading "when" clause followed by a comma and another question word sets a condition and asks something else
# ("When X is called with Y, which separators does it use?"): no date asked.
_DATE_ASKED = re.compile(
    r"^\W*when\b(?![^?]*,\s*(?:which|what|who|whom|whose|where|how)\b)"
    r"|\b(?:what|which) (?:year|date|month|day|century|decade)\b",
    re.IGNORECASE,
)
"""A date question ("When was ...", "In what year ..."); not "When X is called, which ...?" (a condition)."""
MONTH_NAMES = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
"""A month's name or its abbreviation (a regex alternation)."""
_DATE_STATED = re.compile(rf"\d|\b(?:{MONTH_NAMES}|century|centuries|decade)\b", re.IGNORECASE)
"""A date in an answer: a digit, a month's name or a century."""


def asks_date(question: str) -> bool:
    """True when the question asks for a date (``_DATE_ASKED``)."""
    return bool(_DATE_ASKED.search(question))


def states_date(answer: str) -> bool:
    """True when the answer holds something a date is written with (a digit, a month, a century)."""
    return bool(_DATE_STATED.search(answer))


ANSWER_TYPE_DATE = "a date was asked and the final answer states none"
"""``check_answer_type``'s reason: the answer is an entity on the way to the date (the bridge), not the date."""


def check_answer_type(answer: str, *, question: str) -> str:
    """Why a factoid's final answer is not of the kind its question asks, or ``""``: a date question ("When ...",
    "In what year ...") answered with no date is answering a step on the way to it ("Tina Arena" for "When was the
    performer of X born?"), or a follow-up's replan lost the "when". Only dates are checked: on the committed dev
    records every answer to a "how many / how much" question stated a number (docs/bench/answer_type.md)."""
    if asks_date(question) and not states_date(answer) and set(tokens(answer)) - YES_NO:
        return ANSWER_TYPE_DATE
    return ""


# Past this many content words a "short" answer is a sentence, not a name, date or number: the first pass's small
# model restates its passage when it cannot answer ("X was six months pregnant at the time of the recording of Y").
SHORT_ANSWER_WORDS = 8


# A description of an entity the question does not name: a lower-case head noun and its relative or "of" phrase
# ("the performer of X", "the state where X is located", "the country that released X").
_DESCRIBED = re.compile(
    r"\b[Tt]he (?:[a-z]+ ){0,3}?[a-z]+ (?:of|where|that|which|who|whose|in which|by which|from which)\b"
)
NEXT_HOP = "first pass: the answer is stated only beside the entity the question names (a first hop it describes)"
"""``check_next_hop``'s reason: the corrective ``hop`` searches from that answer for what the question asks."""


_ASKS_FOR = re.compile(r"^\W*(?:what|who|which)\s+(?:is|was|are|were)\s+", re.IGNORECASE)
"""A question that asks what a description is ("What is the default value of X?"): that first description is the
answer itself, not an entity on the way to it."""


def describes_entity(question: str) -> bool:
    """True when the question reaches its answer through an entity it only describes (``_DESCRIBED``): a
    description the question asks something about ("Where was the director of X born?", "Who is the sibling of the
    performer of X?"), not the one it asks for ("What is the default value of X?")."""
    opener = _ASKS_FOR.match(question)
    asked_for = opener.end() if opener else -1
    return any(m.start() != asked_for for m in _DESCRIBED.finditer(question))


def question_names(question: str) -> set[str]:
    """Content tokens of the names a question gives: its capitalised words after the first (no numbers, no
    possessive "'s", no one-letter words)."""
    words = re.findall(r"[^\W\d_][\w-]*", question)
    return {t for t in tokens(" ".join(w for w in words[1:] if w[0].isupper())) if len(t) > 1}


def check_next_hop(answer: str, *, question: str, retrieved_texts: Sequence[str]) -> str:
    """Why the first pass's short answer looks like the first hop of a chained question, or ``""``.

    The question describes an entity it does not name ("the performer of Decade") and every passage that states
    the answer also names the question's own entity ("Decade"): the answer was read one hop from the question,
    where the described entity is stated, not where the fact asked about it is (a passage about that entity, which
    need not name the question's). Yes/no answers and questions that name nothing are not checked.
    """
    if set(tokens(answer)) <= YES_NO or not describes_entity(question):
        return ""
    names = question_names(question)
    stating = [text for text in retrieved_texts if grounded(answer, [text])]
    if names and stating and all(names & set(tokens(text)) for text in stating):
        return NEXT_HOP
    return ""


BRIDGE_ANSWER = (
    "first pass: the answer is the entity the question only describes (a passage about it is at hand, and the "
    "passage about the question's own entity states it)"
)
"""``bridge_answer``'s reason: the corrective ``hop`` asks the question about that entity instead."""


def _unqualified(title: str) -> str:
    """A passage title without its parenthesised qualifier ("Ravi (music director)": "Ravi")."""
    return " ".join(re.sub(r"\([^)]*\)", " ", title).split())


def bridge_answer(answer: str, *, question: str, passages: Sequence[tuple[str, str]]) -> str:
    """The entity a first-pass short answer names when it is the one the question only describes, or ``""``.

    "Where was the director of film X born?" answered "Albert S. Rogell": the question describes an entity next
    to a name it gives (``hop.described_span``), a retrieved passage is about the answer (its title, qualifier
    aside, is what the answer opens with) and the passage about the named entity (its title within the
    description) states that title. The answer is then the description's referent, the step on the way, and the
    passage that would state what is asked about it is at hand. ``passages``: (title, text) of each retrieved item.
    Yes/no answers, names the question gives and questions that ask for the description itself are not checked.
    """
    said = tokens(answer)
    span = described_span(question)
    if not said or set(said) <= YES_NO or span is None or not describes_entity(question):
        return ""
    asked = set(tokens(question))
    described = set(tokens(question[span[0] : span[1]]))
    for title, _ in passages:
        entity = _unqualified(title)
        about = tokens(entity)
        if not about or said[: len(about)] != about or set(about) <= asked:
            continue
        for other, text in passages:
            named = tokens(_unqualified(other))
            if other != title and named and set(named) <= described and grounded(entity, [text]):
                return entity
    return ""


def check_first_pass(answer: str, *, question: str, complete: bool, prose: bool) -> str:
    """Why the first pass's answer (``agent.first_pass``: one search for the whole question) is not the run's
    answer, or ``""``: the reply says a link is missing; a sentence where a short answer was asked; no date where
    a date was asked (the bridge entity: "Tina Arena" for "When was the performer of X born?"); a yes/no
    conclusion, or a short answer the question itself names (a choice between its options): those are
    comparisons, planned step by step and computed."""
    if not complete:
        return "first pass: the passages do not state every fact the answer needs"
    if prose:
        return ""
    if len(tokens(answer)) > SHORT_ANSWER_WORDS:
        return "first pass: a sentence where a short answer was asked"
    if asks_date(question) and not states_date(answer):
        return "first pass: a date was asked and the answer states none (an entity on the way to it)"
    if _YES_NO_WORD.match(answer):
        return "first pass: a yes/no conclusion is planned, each side looked up"
    if is_choice(question) or (tokens(answer) and set(tokens(answer)) <= set(tokens(question))):
        return "first pass: the answer is a name the question gives (a choice between its options is planned)"
    return ""
