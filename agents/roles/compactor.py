"""Compactor: pure token-budget arithmetic picks what to summarise; one call writes the note."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.schemas import CompactOut

HEADROOM = 0.7
"""Compaction stops once the context is under this share of the budget (room for the note)."""


@dataclass(frozen=True)
class Sized:
    """A summarisable evidence item: label, estimated tokens, retrieval round."""

    label: str
    tokens: int
    round: int


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters a token, the usual English average)."""
    return (len(text) + 3) // 4


def over_budget(items: Sequence[Sized], notes: Sequence[str], budget: int) -> bool:
    """True when evidence plus notes exceed ``budget`` tokens."""
    return sum(i.tokens for i in items) + sum(estimate_tokens(n) for n in notes) > budget


def pick_for_compaction(items: Sequence[Sized], notes: Sequence[str], budget: int) -> list[str]:
    """Oldest first, never from the latest retrieval round, until under ``HEADROOM`` of the budget."""
    if not items or not over_budget(items, notes, budget):
        return []
    latest = max(i.round for i in items)
    total = sum(i.tokens for i in items) + sum(estimate_tokens(n) for n in notes)
    target = int(budget * HEADROOM)
    picked: list[str] = []
    for item in items:
        if total <= target:
            break
        if item.round == latest:
            continue
        picked.append(item.label)
        total -= item.tokens
    return picked


def fallback_note(titled: Sequence[tuple[str, str]]) -> str:
    """A note without the LLM: the labels and titles of what was summarised."""
    return "Earlier evidence: " + "; ".join(f"[{label}] {title}" for label, title in titled)


async def compact(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, labels: list[str]
) -> tuple[CompactOut, list[Completion]]:
    """Ask for one short note that keeps the useful facts of ``labels``."""
    instruction = render("compactor", labels=", ".join(labels))
    return await structured(llm, builder, context, instruction, CompactOut)
