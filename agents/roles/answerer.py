"""Answerer: the streamed, cited answer, and pure helpers to read citations and "not found"."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.llm import Message
from agents.prompting import Block, PromptBuilder
from agents.prompts import render

NOT_FOUND = "NOT FOUND"
"""What the model replies when the evidence lacks the answer."""
NOT_FOUND_TEXT = "The knowledge base does not contain the answer."
"""What the user reads instead."""

_BRACKETS = re.compile(r"\[([^\]]{1,60})\]")
_LABEL = re.compile(r"\bE(\d{1,4})\b")
_WRAPPED = re.compile(r"\[([^\[\]]+)\]")
_YES_NO = re.compile(r"^(?:yes|no)(?:$|[.,;:!])", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^\s*(?:<answer>|\[answer\]|answer\s*:)\s*", re.IGNORECASE)
"""A copy of the format's ``<answer>`` slot (or ``Answer:``) that small models put before the answer."""


def answer_messages(
    builder: PromptBuilder,
    context: Sequence[Block],
    question: str,
    *,
    direct: bool = False,
    repair: tuple[str, Sequence[str]] | None = None,
    findings: Sequence[tuple[str, str]] = (),
    prose: bool = False,
    chat: bool = False,
) -> list[Message]:
    """Messages of an answer call: grounded, a repair of a draft, or a direct reply (no retrieval).

    ``findings``: (sub-question, answer with its labels) for every step of the plan when all were answered from the
    evidence; the model then combines them. Without findings it may reply ``NOT FOUND``. ``prose``: the planner
    said the question wants a summary, explanation or how-to: a few cited sentences (the plan's answers are in
    the context's Plan block already). ``chat`` (with ``direct``): the message is small talk
    (``agents.roles.smalltalk``): a brief friendly reply that states no facts.
    """
    if direct and chat:
        instruction = render("smalltalk", question=question)
    elif direct:
        instruction = render("direct", question=question)
    elif repair is not None:
        draft, problems = repair
        instruction = render("repair", draft=draft, problems="; ".join(problems) or "unsupported", question=question)
    elif prose:
        instruction = render("answerer_prose", question=question)
    else:
        if findings:
            listed = "\n".join(f"{i}. {q} {a}" for i, (q, a) in enumerate(findings, 1))
            instruction = render("answerer", question=question, findings=listed)
        else:
            instruction = render("answerer_open", question=question)
    return builder.build(context, instruction)


def cited_labels(text: str) -> list[str]:
    """Evidence labels cited in ``text`` (``[E2]``, ``[E1, E3]``), first-seen order, no repeats."""
    found: list[str] = []
    for group in _BRACKETS.findall(text):
        found += [f"E{n}" for n in _LABEL.findall(group)]
    return list(dict.fromkeys(found))


def strip_citations(text: str) -> str:
    """The answer without its ``[E..]`` markers (what answer scoring compares)."""
    cleaned = _BRACKETS.sub(lambda m: "" if _LABEL.search(m.group(1)) else m.group(0), _PLACEHOLDER.sub("", text))
    cleaned = " ".join(cleaned.split()).rstrip(" .,;").strip("<>\"'` ")
    wrapped = _WRAPPED.fullmatch(cleaned)  # "[Arkansas]": the answer written in the labels' brackets
    return wrapped.group(1).strip() if wrapped else cleaned


def is_not_found(text: str) -> bool:
    """True when the reply says the evidence does not contain the answer."""
    body = strip_citations(text).upper().lstrip("[(\"'` ")
    return not body or body.startswith(NOT_FOUND)


def is_yes_no(text: str) -> bool:
    """True when the answer is a bare yes or no (``No [E2]``, ``Yes, both are American``; not ``No Doubt``)."""
    return bool(_YES_NO.match(strip_citations(text)))
