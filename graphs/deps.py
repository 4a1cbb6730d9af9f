"""Everything a run needs, built once and passed in: the LLM, the tool registry, settings, checkpointer."""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agents.llm import LLMBackend
from agents.llm.factory import start_llm
from knowledge.indexes import Indexes, open_indexes
from knowledge.settings import Settings
from tools.base import RetrievalTool


@dataclass
class Deps:
    """The agent's dependencies; graph and tree tools join ``tools`` under their names as they land."""

    llm: LLMBackend
    """The LLM every role calls."""
    tools: dict[str, RetrievalTool]
    """Tool registry by name (``vector_search``, ``graph_search``, ``tree_search``)."""
    settings: Settings
    """All configuration; budgets come from ``settings.agent``."""
    tenant: str = "default"
    """Whose data the tools search."""
    checkpointer: BaseCheckpointSaver[Any] | None = None
    """Thread persistence (SQLite by default); None runs without threads or resume."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic seconds, for the wall-clock budget (tests may pass a fake)."""
    backend: str = ""
    """What serves the LLM: ``llama.cpp-embedded``, ``openai-compatible``, or empty when passed in."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Anything else an adapter wants to keep alive for the run's lifetime."""
    cache_partition: str = ""
    """Secret per-tenant tag after the shared prompt prefix ('' for none): isolates tenants in the prefix cache."""


def _vector_tool(settings: Settings, tenant: str) -> RetrievalTool:
    """The hybrid vector tool over the process-wide store (shared by every tenant, so not closed here)."""
    from knowledge.embeddings import build_embedder
    from knowledge.vector_store import open_vector_store
    from tools.vector_search import VectorSearchTool

    return VectorSearchTool(build_embedder(settings), open_vector_store(settings), tenant)


def _index_tools(settings: Settings, tenant: str, llm: LLMBackend, indexes: Indexes) -> list[RetrievalTool]:
    """``graph_search`` over the shared graph store (when it is up) and ``tree_search`` over the tree store."""
    from agents.llm import MeteredLLM
    from agents.tree_navigator import LLMNavigator
    from tools.graph_search import GraphSearchTool
    from tools.tree_search import TreeSearchTool

    navigator = LLMNavigator(MeteredLLM(llm))  # its calls count in the run that made them (agents.llm.metering)
    out: list[RetrievalTool] = [TreeSearchTool(indexes.trees, navigator, tenant, settings.tree)]
    if indexes.graph is not None:
        out.append(GraphSearchTool(indexes.graph.store, tenant, settings.graph))
    return out


async def open_checkpointer(stack: AsyncExitStack, settings: Settings) -> BaseCheckpointSaver[Any]:
    """SQLite in the data dir by default; Postgres when ``agent.checkpoint_url`` says so."""
    url = settings.agent.checkpoint_url
    if url and url.startswith(("postgres://", "postgresql://")):
        try:
            pg = importlib.import_module("langgraph.checkpoint.postgres.aio")
        except ImportError as exc:
            raise RuntimeError("Postgres checkpoints need: pip install '.[postgres]'") from exc
        saver: BaseCheckpointSaver[Any] = await stack.enter_async_context(pg.AsyncPostgresSaver.from_conn_string(url))
        await saver.setup()  # type: ignore[attr-defined]
        return saver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = str(settings.path("checkpoints.sqlite"))
    return await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(path))


@asynccontextmanager
async def open_deps(
    settings: Settings,
    *,
    tenant: str,
    llm: LLMBackend | None = None,
    tools: dict[str, RetrievalTool] | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    indexes: Indexes | None = None,
    cache_partition: str = "",
) -> AsyncIterator[Deps]:
    """Start the configured LLM (unless one is passed), wire the tools and the checkpointer.

    Without ``tools`` the registry holds ``vector_search``, ``tree_search`` and, when the graph store is
    up, ``graph_search``. Pass ``indexes`` to share one graph store / tree store between tenants.
    """
    async with AsyncExitStack() as stack:
        backend = ""
        if llm is None:
            runtime = await asyncio.to_thread(start_llm, settings)  # a blocking model load
            stack.push_async_callback(runtime.aclose)
            llm, backend = runtime.llm, runtime.backend
        registry: dict[str, RetrievalTool] = dict(tools) if tools is not None else {}
        if tools is None:
            vector = _vector_tool(settings, tenant)
            registry[vector.name] = vector
            if indexes is None:
                indexes = stack.enter_context(open_indexes(settings))
                if indexes.graph is not None:
                    stack.push_async_callback(indexes.graph.store.aclose)
            for tool in _index_tools(settings, tenant, llm, indexes):
                registry[tool.name] = tool
        saver = checkpointer if checkpointer is not None else await open_checkpointer(stack, settings)
        yield Deps(
            llm=llm,
            tools=registry,
            settings=settings,
            tenant=tenant,
            checkpointer=saver,
            backend=backend,
            cache_partition=cache_partition,
        )
