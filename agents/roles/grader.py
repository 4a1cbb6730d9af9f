"""Grader: one batched call judges all new evidence of a retrieval (and reads off the sub-answer); pure keep rules."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import cast

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.schemas import GradeOut, narrowed


@dataclass(frozen=True)
class Candidate:
    """A new evidence item awaiting its grade."""

    label: str
    evidence_id: str


async def grade(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, labels: list[str], subq: str
) -> tuple[GradeOut, list[Completion]]:
    """Ask which of ``labels`` help; the schema admits only those labels."""
    instruction = render("grader", labels=", ".join(labels), subq=subq)
    model_cls = cast(type[GradeOut], narrowed(GradeOut, "relevant", labels, len(labels)))
    return await structured(llm, builder, context, instruction, model_cls)


def keep_rules(
    candidates: Sequence[Candidate], relevant: Collection[str], already_kept: Collection[str]
) -> dict[str, bool]:
    """Pure: keep a candidate the grader marked relevant unless its evidence is already kept (or repeated)."""
    marked = {label.strip().strip("[]") for label in relevant}
    seen = set(already_kept)
    verdict: dict[str, bool] = {}
    for cand in candidates:
        keep = cand.label in marked and cand.evidence_id not in seen
        if keep:
            seen.add(cand.evidence_id)
        verdict[cand.label] = keep
    return verdict
