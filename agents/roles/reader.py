"""The plain reader: one call that answers a question from numbered passages with a short answer and the labels
of the passages it used (``agents/prompts/eval_reader*``: its own short system prompt, the passages, then the
question; plain text, no JSON). The retrieval strategies answer with it, and the agent's first pass does after a
section lookup (``agent.section_answer = "reader"``). Pure prompt building and reply parsing; the caller makes the
call."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.llm.types import Message
from agents.prompting import Block, PromptBuilder
from agents.prompts import render

SYSTEM = render("eval_reader")
"""The reader's system prompt (``agents/prompts/eval_reader.txt``)."""
MAX_TOKENS = 48
"""Token cap of the reader's reply: a short answer and its labels."""
_LABEL = re.compile(r"\[P(\d+)\]")


def reader_builder(*, partition: str = "") -> PromptBuilder:
    """A prompt builder over the reader's system prompt (``partition``: a tenant's cache partition tag)."""
    return PromptBuilder(SYSTEM, partition=partition)


def reader_messages(builder: PromptBuilder, question: str, passages: Sequence[tuple[str, str]]) -> list[Message]:
    """The reader's messages: ``passages`` (``(title, text)``) numbered ``[P1]``, ``[P2]``, … in order, then the
    question and the task."""
    body = "\n\n".join(f"[P{i}] {title}: {text}" for i, (title, text) in enumerate(passages, start=1))
    return builder.build([Block("Passages", body or "(none)"), Block("Question", question)], render("eval_reader_task"))


def cited_indices(text: str, n: int) -> list[int]:
    """0-based indices of the passages the ``[Pn]`` labels of ``text`` point at (out-of-range labels dropped)."""
    return [int(m) - 1 for m in _LABEL.findall(text) if 1 <= int(m) <= n]


def split_answer(text: str, ids: Sequence[str]) -> tuple[str, list[str]]:
    """The answer (first line, labels, quotes and a final full stop removed) and the ids its labels point at."""
    cited = [ids[i] for i in cited_indices(text, len(ids))]
    answer = _LABEL.sub("", text).strip().splitlines()[0] if text.strip() else ""
    return answer.strip().strip("[]\"'").strip().rstrip("."), cited
