"""The one place the durable state stores are chosen: thread checkpoints and the trace store (runs, events).

SQLite in the data dir by default; Postgres for both when ``postgres_url`` (``WAYPOINT_POSTGRES_URL``) is set
(checkpoints alone may go elsewhere with ``agent.checkpoint_url``). A new backend is chosen here and nowhere else.
"""

from __future__ import annotations

import importlib
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from graphs.tracing.run_store import RunStore
from graphs.tracing.store import TraceStore
from knowledge.postgres import is_postgres_url
from knowledge.settings import Settings


@dataclass
class StateStores:
    """The durable state of runs: LangGraph checkpoints per thread and the trace store of runs and events."""

    checkpointer: BaseCheckpointSaver[Any]
    """Thread persistence, so a thread sees its earlier turns and an interrupted run can resume."""
    traces: RunStore
    """Runs and their events, read by the trace viewer and replayed by ``GET /v1/runs/{id}/events``."""


async def open_state_stores(stack: AsyncExitStack, settings: Settings) -> StateStores:
    """Open the checkpointer and the trace store on ``stack`` (closed when it closes)."""
    checkpointer = await open_checkpointer(stack, settings)
    traces = open_trace_store(settings)
    stack.callback(traces.close)
    return StateStores(checkpointer=checkpointer, traces=traces)


def open_trace_store(settings: Settings) -> RunStore:
    """The trace store: Postgres (schema migrated) or ``DATA_DIR/runs.sqlite``; the caller closes it."""
    url = settings.postgres_url
    return open_run_store(url if url and is_postgres_url(url) else str(settings.path("runs.sqlite")))


def open_run_store(where: str) -> RunStore:
    """A trace store by address: a ``postgresql://`` URL, or a ``runs.sqlite`` file (created when missing)."""
    if is_postgres_url(where):
        from graphs.tracing.pg_store import PgTraceStore

        return PgTraceStore.open(where)
    return TraceStore.open(where)


async def open_checkpointer(stack: AsyncExitStack, settings: Settings) -> BaseCheckpointSaver[Any]:
    """SQLite in the data dir by default; Postgres when ``agent.checkpoint_url`` (or ``postgres_url``) says so."""
    url = settings.agent.checkpoint_url or settings.postgres_url
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
