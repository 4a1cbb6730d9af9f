"""A follow-up question's search query: "Where was he born?" after "Who directed Inception?" searched with the
earlier turns it may point to beside it (back to the last one that named something), so the first search finds
the person the pronoun stands for (the answer call sees the earlier turns in its prompt already; the search does
not). Pure, no LLM call: the conversational-search baseline of expanding the query with the conversation, applied
only where the question points back and names nothing itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agents.roles.absence import named_terms
from agents.roles.answerer import NOT_FOUND_TEXT, is_not_found
from agents.roles.checks import same_answer
from agents.roles.smalltalk import small_talk

_REFERS = re.compile(
    r"\b(?:he|she|it|they|him|her|his|hers|its|their|theirs|them|this|that|these|those|there|same)\b", re.IGNORECASE
)
"""A word that points back to something said earlier: a third-person pronoun or a demonstrative."""


def refers_back(question: str) -> bool:
    """True when ``question`` points back (a pronoun or demonstrative) and gives no name of its own
    (``agents.roles.absence.named_terms``): "Where was he born?", not "Where was Nolan born?"."""
    return bool(_REFERS.search(question)) and not named_terms(question)


MAX_CHAIN = 3
"""At most this many earlier turns go into a follow-up's query (the newest first)."""


def _answer_of(turn: Mapping[str, object]) -> str:
    """A turn's answer, ``""`` where it was "not found"."""
    answer = str(turn.get("answer", ""))
    return "" if is_not_found(answer) or answer == NOT_FOUND_TEXT else answer


def _turn_text(turn: Mapping[str, object]) -> str:
    """A turn's question and answer ("not found" left out)."""
    return " ".join(p for p in (str(turn.get("question", "")), _answer_of(turn)) if p)


def followup_query(question: str, history: Sequence[Mapping[str, object]]) -> str:
    """``question``, when it points back, plus the earlier turns it may point to: newest first, back to the last
    turn whose question stood on its own (named something, or pointed nowhere), at most ``MAX_CHAIN`` of them,
    small talk ("Thanks!") passed over. "When did he marry?" after "Who directed Inception?" → "Christopher Nolan"
    and "Where was he born?" → "London" reaches back to the turn that names Inception. Else the question
    unchanged."""
    if not history or not refers_back(question):
        return question
    parts = [question]
    for turn in reversed(history):
        asked = str(turn.get("question", ""))
        if small_talk(asked):
            continue
        parts.append(_turn_text(turn))
        if not refers_back(asked) or len(parts) > MAX_CHAIN:
            break
    return " ".join(p for p in parts if p)


def answered_in_thread(ask: str, history: Sequence[Mapping[str, object]]) -> str:
    """The answer an earlier turn of the thread gave to ``ask`` (the same question: the same content words), the
    newest such turn's, or ``""`` (none, or it was "not found"). A follow-up's plan often restates the turn it
    points back to as its first step ("In which town was the engineer ... born?", then "When was she born?"): that
    step is already answered."""
    for turn in reversed(history):
        if same_answer(ask, str(turn.get("question", ""))):
            return _answer_of(turn)
    return ""
