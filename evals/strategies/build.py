"""Build a strategy by name: a registered one, or ``tool:NAME`` over the Deps tool ``NAME``."""

from __future__ import annotations

from evals.errors import EvalError
from evals.strategies.base import TOOL_PREFIX, Strategy, StrategyContext, registered
from evals.strategies.retrieval import tool_strategy


async def build_strategy(name: str, ctx: StrategyContext) -> Strategy:
    """The named strategy, or ``tool:NAME``: the Deps tool ``NAME`` searched once per question."""
    specs = registered()
    spec = specs.get(name)
    if spec is not None:
        return await spec.factory(ctx)
    if name.startswith(TOOL_PREFIX):
        return await tool_strategy(ctx, name=name, tool_name=name.removeprefix(TOOL_PREFIX))
    known = ", ".join(sorted(specs))
    raise EvalError(f"unknown strategy {name!r}; known: {known}, or {TOOL_PREFIX}<tool name>")
