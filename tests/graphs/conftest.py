"""Fixtures of the agent tests: Deps over a scripted LLM double and tiny real tools."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from agent_support import ListTool, MakeDeps

from agents.llm import LLMBackend
from graphs.deps import Deps
from knowledge.settings import AgentConfig, Settings


@pytest.fixture
def make_deps(settings: Settings) -> MakeDeps:
    """Build Deps with a given LLM, tools (default: one ListTool) and agent config overrides on the ``settings``
    fixture's agent config (plan first, unless a test turns ``first_pass`` on: the scripts reply to the planner)."""

    def make(llm: LLMBackend, tools: Sequence[Any] | None = None, checkpointer: Any = None, **agent: Any) -> Deps:
        cfg = settings.model_copy(update={"agent": AgentConfig(**{**settings.agent.model_dump(), **agent})})
        registry = {t.name: t for t in (tools if tools is not None else [ListTool()])}
        return Deps(llm=llm, tools=registry, settings=cfg, checkpointer=checkpointer)

    return make
