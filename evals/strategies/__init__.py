"""Eval strategies by name; importing this package registers the built-in ones."""

from evals.strategies import agent, bm25, retrieval  # noqa: F401  (importing registers them)
from evals.strategies.base import Strategy, StrategyContext, build_strategy, register_strategy, registered

__all__ = ["Strategy", "StrategyContext", "build_strategy", "register_strategy", "registered"]
