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
from agents.roles.schemas import PlanOut, PlanStep, routed_plan


async def plan(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, max_subq: int, tools: Sequence[str] = ()
) -> tuple[PlanOut, list[Completion]]:
    """Ask the model for a routed plan: the answer kind, and per step a sub-question, one of ``tools`` and why."""
    instruction = render("planner", max_subq=max_subq)
    return await structured(llm, builder, context, instruction, routed_plan(sorted(tools), max_subq))


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


def clean_steps(steps: Sequence[PlanStep], question: str, max_subq: int, tools: Sequence[str]) -> list[PlanStep]:
    """``clean_plan`` over routed steps, each keeping its tool and reason; a tool the run may not use becomes ``""``
    (the fused fallback), and a step that became the whole question keeps the tool of the step it replaced."""
    texts = clean_plan([s.ask for s in steps], question, max_subq)
    routing: dict[str, PlanStep] = {}
    for step in steps:
        key = _key(question if loops(step.ask) else drop_labels(step.ask))
        routing.setdefault(key, step)
    out = []
    for text in texts:
        src = routing.get(_key(text))
        tool = src.tool if src is not None and src.tool in tools else ""
        why = " ".join(src.why.split()) if src is not None and tool else ""
        out.append(PlanStep.of(text, tool, why))
    return out
