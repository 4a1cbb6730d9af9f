"""The graph factory ``langgraph dev`` / LangGraph Studio loads (see ``langgraph.json``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from graphs.graph import build_graph
from graphs.services import open_deps
from knowledge.settings import Settings


@asynccontextmanager
async def make_graph(config: Any = None) -> AsyncIterator[Any]:
    """Open Deps from the environment's settings and yield the compiled agent (the server owns persistence)."""
    settings = Settings()
    async with open_deps(settings, tenant=settings.default_tenant) as deps:
        yield build_graph(deps, checkpointer=False)
