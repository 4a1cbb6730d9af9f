"""A follow-up question's search query: "Where was he born?" after "Who directed Inception?" searched with the
previous turn beside it, so the first search finds the person the pronoun stands for (the answer call sees the
earlier turns in its prompt already; the search does not). Pure, no LLM call: the conversational-search baseline
of expanding the query with the last turn, applied only where the question points back and names nothing itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agents.roles.absence import named_terms
from agents.roles.answerer import NOT_FOUND_TEXT, is_not_found

_REFERS = re.compile(
    r"\b(?:he|she|it|they|him|her|his|hers|its|their|theirs|them|this|that|these|those|there|same)\b", re.IGNORECASE
)
"""A word that points back to something said earlier: a third-person pronoun or a demonstrative."""


def refers_back(question: str) -> bool:
    """True when ``question`` points back (a pronoun or demonstrative) and gives no name of its own
    (``agents.roles.absence.named_terms``): "Where was he born?", not "Where was Nolan born?"."""
    return bool(_REFERS.search(question)) and not named_terms(question)


def followup_query(question: str, history: Sequence[Mapping[str, object]]) -> str:
    """``question``, plus the last turn's question and answer (not a "not found") when it points back; else the
    question unchanged."""
    if not history or not refers_back(question):
        return question
    last = history[-1]
    answer = str(last.get("answer", ""))
    if is_not_found(answer) or answer == NOT_FOUND_TEXT:
        answer = ""
    return " ".join(p for p in (question, str(last.get("question", "")), answer) if p)
