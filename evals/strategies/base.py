"""The strategy protocol and registry: strategies are found by name, so new ones plug in without runner edits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from evals.datasets import Dataset, Question
from evals.errors import EvalError
from evals.records import Outcome
from knowledge.settings import Settings

if TYPE_CHECKING:
    from evals.resources import EvalResources


class Strategy(Protocol):
    """Answers (or only retrieves for) one question at a time."""

    name: str
    """The name records and reports use."""
    answers: bool
    """True when the strategy produces answers (EM / F1 apply)."""

    async def run(self, question: Question) -> Outcome:
        """Run one question; raise on failure (the runner records the error and goes on)."""
        ...


@dataclass(frozen=True)
class StrategyContext:
    """What a strategy factory may use."""

    settings: Settings
    """All configuration."""
    dataset: Dataset
    """The dataset under evaluation."""
    resources: EvalResources
    """Shared, lazily opened resources: the ingested tenant, Deps (LLM + tools)."""
    retrieval_only: bool = False
    """Score retrieval only; do not generate answers."""
    k: int = 5
    """Passages per retrieval call."""


StrategyFactory = Callable[[StrategyContext], Awaitable[Strategy]]


@dataclass(frozen=True)
class StrategySpec:
    """A registered strategy."""

    name: str
    factory: StrategyFactory
    description: str
    needs_llm: bool = False
    """True when the strategy calls the LLM even retrieval-only (agent, tree search)."""


_REGISTRY: dict[str, StrategySpec] = {}


def register_strategy(name: str, factory: StrategyFactory, description: str, *, needs_llm: bool = False) -> None:
    """Make ``name`` available to ``waypoint eval --strategy``; re-registering a name replaces it."""
    _REGISTRY[name] = StrategySpec(name, factory, description, needs_llm)


def needs_llm(names: Sequence[str], *, retrieval_only: bool) -> bool:
    """Whether running these strategies needs a real LLM (unknown names might: assume yes)."""
    if not retrieval_only:
        return True
    return any(name not in _REGISTRY or _REGISTRY[name].needs_llm for name in names)


def check_names(names: Sequence[str]) -> None:
    """Fail fast on a name that is neither registered nor ``tool:NAME``."""
    for name in names:
        if name not in _REGISTRY and not name.startswith(TOOL_PREFIX):
            known = ", ".join(sorted(_REGISTRY))
            raise EvalError(f"unknown strategy {name!r}; known: {known}, or {TOOL_PREFIX}<tool name>")


def registered() -> dict[str, StrategySpec]:
    """The registered strategies by name."""
    return dict(_REGISTRY)


TOOL_PREFIX = "tool:"
"""``--strategy tool:NAME`` runs any tool registered in Deps once per question (new tools need no edits here)."""
