"""Fixtures of the agent tests: Deps over a scripted LLM double and tiny real tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from agent_support import ListTool

from agents.llm import LLMBackend
from graphs.deps import Deps
from graphs.events import Envelope
from graphs.runner import RunRequest, stream_run
from knowledge.settings import AgentConfig, Settings

MakeDeps = Callable[..., Deps]


@pytest.fixture
def make_deps(settings: Settings) -> MakeDeps:
    """Build Deps with a given LLM, tools (default: one ListTool) and agent config overrides."""

    def make(llm: LLMBackend, tools: Sequence[Any] | None = None, checkpointer: Any = None, **agent: Any) -> Deps:
        cfg = settings.model_copy(update={"agent": AgentConfig(**agent)})
        registry = {t.name: t for t in (tools if tools is not None else [ListTool()])}
        return Deps(llm=llm, tools=registry, settings=cfg, checkpointer=checkpointer)

    return make


async def run_all(deps: Deps, question: str, **kwargs: Any) -> list[Envelope]:
    """Every envelope of one run."""
    return [e async for e in stream_run(deps, RunRequest(question=question, **kwargs))]
