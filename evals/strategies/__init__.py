"""Eval strategies by name; importing this package registers the built-in ones."""

from evals.strategies import agent, bm25, retrieval  # noqa: F401  (importing registers them)
from evals.strategies.base import Strategy, StrategyContext, register_strategy, registered
from evals.strategies.build import build_strategy

__all__ = ["Strategy", "StrategyContext", "build_strategy", "register_strategy", "registered"]
