"""Planner: does the question need retrieval, and which ordered sub-questions answer it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.labels import drop_labels
from agents.roles.schemas import PlanOut


async def plan(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, max_subq: int
) -> tuple[PlanOut, list[Completion]]:
    """Ask the model for a plan."""
    instruction = render("planner", max_subq=max_subq)
    return await structured(llm, builder, context, instruction, PlanOut, max_tokens=48 + 40 * max_subq)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def clean_plan(subquestions: Sequence[str], question: str, max_subq: int) -> list[str]:
    """Strip evidence labels, drop empties and repeats, cap the count; no usable step means the question itself.

    A step that restates the whole question answers it only after the others, so it moves last.
    """
    seen: set[str] = set()
    steps: list[str] = []
    for raw in subquestions:
        text = drop_labels(raw)
        key = _key(text)
        if key and key not in seen:
            seen.add(key)
            steps.append(text)
    steps = steps[:max_subq]
    whole = _key(question)
    return sorted(steps, key=lambda s: _key(s) == whole) or [" ".join(question.split())]
