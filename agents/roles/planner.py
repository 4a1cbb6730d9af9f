"""Planner: does the question need retrieval, and which ordered sub-questions answer it."""

from __future__ import annotations

import re
from collections import Counter
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
    return await structured(llm, builder, context, instruction, PlanOut)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def loops(text: str, times: int = 3) -> bool:
    """True when some three words (``#1``, ``#2``, ... counted as one word) recur ``times`` times: a model stuck
    repeating itself ("who played the part of the actress who played the part of ...")."""
    words = ["#" if w.startswith("#") else w for w in re.findall(r"#\d+|\w+", text.lower())]
    grams = Counter(zip(words, words[1:], words[2:], strict=False))
    return max(grams.values(), default=0) >= times


def clean_plan(subquestions: Sequence[str], question: str, max_subq: int) -> list[str]:
    """Strip evidence labels, drop empties and repeats, cap the count; no usable step means the question itself.

    A step that loops (the schema cut it at its length bound) becomes the whole question. A step that restates
    the whole question answers it only after the others, so it moves last.
    """
    seen: set[str] = set()
    steps: list[str] = []
    for raw in subquestions:
        text = question if loops(raw) else drop_labels(raw)
        key = _key(text)
        if key and key not in seen:
            seen.add(key)
            steps.append(text)
    steps = steps[:max_subq]
    whole = _key(question)
    return sorted(steps, key=lambda s: _key(s) == whole) or [" ".join(question.split())]
