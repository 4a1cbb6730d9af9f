"""The next hop's question: the question with the entity it describes replaced by the first pass's answer.

"Who is the sibling of the performer of Decade?" answered "Neil Young" (the performer) becomes "Who is the sibling
of Neil Young?": a one-hop question a small model can answer from a passage about Neil Young, where a note beside
the original question ("found on the way: Neil Young") left it answering the first hop again.

The description replaced is the innermost one, next to the name the question gives: a lower-case head noun after
"the" and what ties it to the name ("of", "that produced", "where ... is located", "X is from"), through the name,
and through a closing verb group from a short list ("is located in", "is part of", "took place", "died"). A
question where no such description ends at a name is left alone (``""``).
"""

from __future__ import annotations

import re

# A name as questions write it: capitalised words, with the small words titles keep inside ("Songs I Wrote with
# Amy", "Bastien und Bastienne"), maybe after a category word ("film The Well (1951 Film)"); not a possessive (in
# "NATO's creators" the description goes on).
_NAME = (
    r"(?:(?:the )?[a-z]+ )??(?:the )?[A-Z0-9][\w.&-]*(?:(?: (?:of|the|and|de|von|van|in|und|for|a|with|on|to))*"
    r" [A-Z0-9][\w.&-]*)*(?: \([^)]*\))?(?!['\u2019\w])"
)
_TIE = r"(?:of|that \w+|which \w+|who \w+|containing|with)"
"""What ties a description to the name after it ("the performer of", "the country that produced")."""
_WHERE = r"(?:where|in which|whose \w+)"
"""A relative description, closed by a verb group after the name ("the state where X is located")."""
# The verb group that closes a relative description ("where X is located", "where X died"), or the question's end;
# a clause that goes on with another verb ("where Hayek got his doctorates") is not replaced.
_CLOSING = (
    r"(?: (?:is|was|are|were) (?:located|found|based|set|situated|headquartered|born|from|part of)"
    r"| took place| died| lived| occurred| occur| comes from| (?:is|was)(?= [a-z]| ?[?,])|(?= ?[?,]))"
)
_DESCRIBED = re.compile(
    rf"\b[Tt]he (?:[a-z]+ ){{0,2}}?[a-z]+ "
    rf"(?:{_TIE} {_NAME}|{_WHERE} {_NAME}{_CLOSING}|{_NAME} (?:is|was) (?:from|part of|located in|in))"
)
_SELECTION = re.compile(r"\b(?:which|one|each|any|all|some|none) of $", re.IGNORECASE)
""""Which of the founders of X": the description is what the question chooses from, not an entity on the way."""


def described_span(question: str) -> tuple[int, int] | None:
    """Where the question's innermost described entity is written ("the director of film X"), or None when no
    description ends at a name the question gives (or it is what the question chooses from)."""
    matches = list(_DESCRIBED.finditer(question))
    if not matches:
        return None
    m = matches[-1]
    if _SELECTION.search(question[: m.start()]):
        return None
    return m.start(), m.end()


def hop_question(question: str, answer: str) -> str:
    """``question`` with its innermost described entity replaced by ``answer``, or ``""`` when no description
    ends at a name the question gives."""
    answer = answer.strip().rstrip(".")
    span = described_span(question)
    if not answer or span is None:
        return ""
    return f"{question[: span[0]]}{answer}{question[span[1] :]}"
