"""Planner: does the question need retrieval, and which ordered sub-questions answer it."""

from __future__ import annotations

from collections.abc import Sequence

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.schemas import PlanOut


async def plan(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, max_subq: int
) -> tuple[PlanOut, list[Completion]]:
    """Ask the model for a plan."""
    instruction = render("planner", max_subq=max_subq)
    return await structured(llm, builder, context, instruction, PlanOut, max_tokens=48 + 40 * max_subq)


def clean_plan(subquestions: Sequence[str], question: str, max_subq: int) -> list[str]:
    """Strip, drop empties and repeats, cap the count; no usable step means the question itself."""
    seen: set[str] = set()
    steps: list[str] = []
    for raw in subquestions:
        text = " ".join(raw.split())
        key = text.lower()
        if text and key not in seen:
            seen.add(key)
            steps.append(text)
    return steps[:max_subq] or [" ".join(question.split())]
