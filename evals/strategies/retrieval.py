"""Retrieval-tool strategies: one call of a ``RetrievalTool`` from Deps (vector, graph, tree, any new tool)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from evals.datasets import Question
from evals.errors import EvalError
from evals.records import Outcome
from evals.strategies.base import Strategy, StrategyContext, register_strategy
from evals.strategies.reader import Reader
from graphs.public import RetrievalTool, llm_calls
from graphs.runner import RunRequest
from graphs.single_shot import first_search_tools, first_search_with_tools
from knowledge.models import Evidence

Search = Callable[[str, int], Awaitable[tuple[list[Evidence], list[str]]]]
"""(query, k) -> (what was found, the tools that ran)."""


class ToolStrategy:
    """Search once with a tool; optionally answer from what it returned with one LLM call."""

    answers: bool

    def __init__(self, name: str, tool_name: str, search: Search, *, k: int, reader: Reader | None) -> None:
        self.name = name
        self.tool_name = tool_name
        self.search = search
        self.k = k
        self.reader = reader
        self.answers = reader is not None

    async def run(self, question: Question) -> Outcome:
        """One search (plus the reader's answer when not retrieval-only)."""
        with llm_calls() as calls:  # tree_search's navigator calls the LLM inside the tool
            found, ran = await self.search(question.question, self.k)
        ids = [e.doc_id for e in found]
        base = Outcome(
            retrieved_ids=ids,
            retrieved_tools=[e.tool or self.tool_name for e in found],
            retrieved_call=[1] * len(ids),
            retrieved_paths=[list(e.section_path) for e in found],
            tool_calls=["+".join(ran) or self.tool_name],
            llm_calls=len(calls),
            prompt_tokens=sum(c.usage.prompt_tokens for c in calls),
            cached_tokens=sum(c.usage.cached_tokens for c in calls),
            completion_tokens=sum(c.usage.completion_tokens for c in calls),
        )
        if self.reader is None:
            return base
        passages = [(e.doc_id, e.title, e.text) for e in found]
        return await self.reader.answer(question.question, passages, base, paths=[list(e.section_path) for e in found])


def _searcher(tool: RetrievalTool, extra: dict[str, Any]) -> Search:
    async def search(query: str, k: int) -> tuple[list[Evidence], list[str]]:
        return await tool.search(query, k=k, **extra), [tool.name]

    return search


async def tool_strategy(ctx: StrategyContext, *, name: str, tool_name: str, **extra: Any) -> Strategy:
    """A ``ToolStrategy`` over ``deps.tools[tool_name]``; ``extra`` goes to every search (e.g. ``mode``)."""
    deps = await ctx.resources.deps()
    tool = deps.tools.get(tool_name)
    if tool is None:
        available = ", ".join(sorted(deps.tools)) or "none"
        raise EvalError(f"strategy {name!r} needs tool {tool_name!r}, which is not available (tools: {available})")
    reader = None if ctx.retrieval_only else Reader(deps.llm)
    return ToolStrategy(name, tool_name, _searcher(tool, extra), k=ctx.k, reader=reader)


def register_tool_strategy(
    name: str, tool_name: str, description: str, *, needs_llm: bool = False, **extra: Any
) -> None:
    """Register a strategy that runs ``tool_name`` once per question (``extra`` passed to its search)."""
    factory = functools.partial(tool_strategy, name=name, tool_name=tool_name, **extra)
    register_strategy(name, factory, description, needs_llm=needs_llm)


register_tool_strategy("vector", "vector_search", "Vector search, dense only", mode="dense")
register_tool_strategy("dense", "vector_search", "Vector search, dense only", mode="dense")
register_tool_strategy("sparse", "vector_search", "Vector search, sparse only", mode="sparse")
register_tool_strategy("hybrid", "vector_search", "Vector search, dense + sparse fused", mode="hybrid")
register_tool_strategy("graph", "graph_search", "Knowledge-graph retrieval")
register_tool_strategy("tree", "tree_search", "Vectorless tree search (the LLM reads contents)", needs_llm=True)


async def fused_strategy(ctx: StrategyContext) -> Strategy:
    """The agent's first search, retrieval-only: vector + graph, each ``fusion_depth`` deep, RRF-fused into k."""
    deps = await ctx.resources.deps()
    tools = first_search_tools(deps, RunRequest(question="first search"))
    if not tools:
        raise EvalError("strategy 'fused' needs a retrieval tool; none is available")

    async def search(query: str, k: int) -> tuple[list[Evidence], list[str]]:
        return await first_search_with_tools(deps, query, k=k)

    reader = None if ctx.retrieval_only else Reader(deps.llm)
    return ToolStrategy("fused", "+".join(tools), search, k=ctx.k, reader=reader)


register_strategy(
    "fused",
    fused_strategy,
    "The agent's first search alone: vector + graph search fused by reciprocal rank (graphs.single_shot.first_search)",
)
