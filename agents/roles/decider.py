"""Decider: does the evidence answer the sub-question; if not, the bounded correction policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.schemas import DecideOut

Correction = Literal["rewrite", "switch", "give_up"]


async def decide(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, n: int, subq: str
) -> tuple[DecideOut, list[Completion]]:
    """Ask whether sub-question ``n`` is answered, and the short answer."""
    instruction = render("decider", n=n, subq=subq)
    return await structured(llm, builder, context, instruction, DecideOut)


TOOL_ORDER = ("vector_search", "graph_search", "tree_search")
"""Which tool a switch tries first: cheapest and broadest first (tree search spends LLM calls to navigate)."""


def tool_rank(name: str) -> tuple[int, str]:
    """Sort key: known tools in ``TOOL_ORDER``, others after them by name."""
    return (TOOL_ORDER.index(name) if name in TOOL_ORDER else len(TOOL_ORDER), name)


def correction(
    retries_used: int, max_retries: int, tools_tried: Sequence[str], allowed: Sequence[str], *, tool_failed: bool
) -> tuple[Correction, str | None]:
    """Pure Corrective-RAG policy: rewrite the query once, then switch tool; give up past the budget.

    Returns the action and the tool to use (None: the router chooses freely).
    """
    if retries_used >= max_retries:
        return "give_up", None
    untried = [t for t in sorted(allowed, key=tool_rank) if t not in tools_tried]
    last = tools_tried[-1] if tools_tried else None
    if tool_failed or last is None or last not in allowed:
        return ("switch", untried[0]) if untried else ("give_up", None)
    if tools_tried.count(last) >= 2 and untried:
        return "switch", untried[0]
    return "rewrite", last


Step = Literal["rewrite", "widen", "switch", "give_up"]


def next_correction(
    retries_used: int,
    max_retries: int,
    *,
    tools_tried: Sequence[str],
    last_tools: Sequence[str],
    allowed: Sequence[str],
    fused: Sequence[str],
    tool_failed: bool,
    widened: bool,
) -> tuple[Step, list[str]]:
    """Pure policy for a step whose attempt missed or whose answer failed its check: what to try next, bounded.

    - past ``max_retries``: give up;
    - the tools failed or found nothing (an error, 0 results: another query will not help there): switch to an
      untried tool (cheapest first), else widen once, else give up;
    - evidence came back but nothing was kept or the answer failed its check: widen once (the fused tools with the
      last ones, deeper, new items only), then switch to an untried tool, then rewrite the query.

    ``widened``: this step was widened already. Returns the step and its tools (``rewrite``: the last ones).
    """
    if retries_used >= max_retries:
        return "give_up", []
    untried = [t for t in sorted(allowed, key=tool_rank) if t not in tools_tried]
    wide = list(dict.fromkeys([*(t for t in fused if t in allowed), *(t for t in last_tools if t in allowed)]))
    if tool_failed:
        if untried:
            return "switch", [untried[0]]
        return ("widen", wide) if wide and not widened else ("give_up", [])
    if wide and not widened:
        return "widen", wide
    if untried:
        return "switch", [untried[0]]
    last = [t for t in last_tools if t in allowed]
    return ("rewrite", last) if last else ("give_up", [])
