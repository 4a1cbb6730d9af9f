"""Trace viewer API: the runs list (filters, pagination), a run's span tree, the agent graph; retention and OTel."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Path, Query
from pydantic import BaseModel, Field

from api.deps import RunFn, RunSpec
from api.error_docs import KEYED, READ
from api.errors import APIError, not_found
from api.routes.ui import router as ui_router
from api.schemas import RunView
from api.state import AppState, app_state
from api.tenants import current_tenant
from graphs.events import Envelope
from graphs.tracing.otel import OTelExporter
from graphs.tracing.run_store import RunStore
from graphs.tracing.spans import AGENT_EDGES, AGENT_NODES, RunTrace, build_trace
from graphs.tracing.store import RunRecord, RunStatus
from knowledge.settings import Settings, TracesConfig

log = logging.getLogger(__name__)

router = APIRouter(tags=["traces"])

IdPath = Annotated[str, Path(min_length=1, max_length=128)]


class RunSummary(BaseModel):
    """One row of the runs list."""

    run_id: str
    thread_id: str | None
    question: str
    status: str
    started_at: float
    ended_at: float | None
    duration_s: float | None
    """Wall time; None while running."""
    llm_calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    cached_share: float
    """Cached prompt tokens / prompt tokens (0 without LLM calls)."""


class RunPage(BaseModel):
    """``GET /v1/runs``: one page of runs, newest first."""

    runs: list[RunSummary]
    next_cursor: str | None
    """Pass as ``cursor`` for the next page; None on the last page."""


class RunSpans(BaseModel):
    """``GET /v1/runs/{id}/spans``: the run's stored state and its span tree."""

    run: RunView
    trace: RunTrace


class AgentGraph(BaseModel):
    """``GET /v1/agent/graph``: the nodes and possible edges of the agent graph."""

    nodes: list[str]
    edges: list[Annotated[list[str], Field(min_length=2, max_length=2)]]
    """Each edge as ``[from, to]``."""


def encode_cursor(run: RunRecord) -> str:
    """An opaque cursor pointing just past ``run`` in newest-first order."""
    raw = json.dumps([run.started_at, run.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    """The (started_at, id) in a cursor; ValueError when it is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        started, run_id = json.loads(raw)
        return float(started), str(run_id)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"bad cursor {cursor!r}") from exc


def summarize(run: RunRecord, usage: dict[str, int]) -> RunSummary:
    """A list row from the stored run and its summed usage events."""
    prompt, cached = usage.get("prompt_tokens", 0), usage.get("cached_tokens", 0)
    return RunSummary(
        run_id=run.id,
        thread_id=run.thread_id,
        question=run.question,
        status=run.status,
        started_at=run.started_at,
        ended_at=run.ended_at,
        duration_s=None if run.ended_at is None else max(0.0, run.ended_at - run.started_at),
        llm_calls=usage.get("llm_calls", 0),
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=usage.get("completion_tokens", 0),
        cached_share=round(cached / prompt, 4) if prompt else 0.0,
    )


@router.get("/v1/runs", responses=KEYED)
async def list_runs(
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
    thread_id: Annotated[str | None, Query(max_length=128)] = None,
    status: Annotated[RunStatus | None, Query()] = None,
    since: Annotated[float | None, Query(description="Started at or after (unix seconds)")] = None,
    until: Annotated[float | None, Query(description="Started before (unix seconds)")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> RunPage:
    """The tenant's runs, newest first, filtered by thread, status and start time; paginated by cursor."""
    try:
        before = decode_cursor(cursor) if cursor else None
    except ValueError as exc:
        raise APIError(422, "invalid_request", str(exc)) from exc
    store = state.store
    runs = store.list_runs(
        tenant=tenant, thread_id=thread_id, status=status, since=since, until=until, before=before, limit=limit + 1
    )
    page, more = runs[:limit], len(runs) > limit
    usage = store.usage_by_run([r.id for r in page], tenant=tenant)
    return RunPage(
        runs=[summarize(r, usage.get(r.id, {})) for r in page], next_cursor=encode_cursor(page[-1]) if more else None
    )


@router.get("/v1/runs/{run_id}/spans", responses=READ)
async def run_spans(
    run_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> RunSpans:
    """The run's span tree (run → step → LLM / tool / grade / compaction), as far as it has got."""
    run = state.store.get_run(run_id, tenant=tenant)
    if run is None:
        raise not_found("run", run_id)
    events = state.store.events(run_id, tenant=tenant)
    return RunSpans(run=RunView.of(run, len(events)), trace=build_trace(run_id, events))


@router.get("/v1/agent/graph", responses=KEYED)
async def agent_graph(_: Annotated[str, Depends(current_tenant)]) -> AgentGraph:
    """The agent graph's nodes and edges (the run page highlights the path a run took)."""
    return AgentGraph(nodes=list(AGENT_NODES), edges=list(AGENT_EDGES))


def exporting(run: RunFn, exporter: OTelExporter) -> RunFn:
    """Wrap a run function so that each run's spans are exported over OTel when it ends (however it ends)."""

    async def wrapped(spec: RunSpec) -> AsyncIterator[Envelope]:
        seen: list[Envelope] = []
        try:
            async for envelope in run(spec):
                seen.append(envelope)
                yield envelope
        finally:
            try:
                run_id = spec.run_id or (seen[0].run_id if seen else "")  # the API always sets both
                exporter.export(build_trace(run_id, seen), tenant=spec.tenant or "")
            except Exception:  # export must never break a run
                log.exception("OTel export of run %s failed", spec.run_id)

    return wrapped


def purge_expired(store: RunStore, cfg: TracesConfig, *, now: float | None = None) -> int:
    """Apply the retention policy once; returns the number of runs deleted."""
    if cfg.retention_days <= 0:
        return 0
    cutoff = (time.time() if now is None else now) - cfg.retention_days * 86400
    return store.purge(older_than=cutoff)


async def _retention_loop(store: RunStore, cfg: TracesConfig) -> None:
    while True:
        try:
            deleted = await asyncio.to_thread(purge_expired, store, cfg)
            if deleted:
                log.info("retention: deleted %d runs older than %s days", deleted, cfg.retention_days)
        except Exception:
            log.exception("retention pass failed")
        await asyncio.sleep(cfg.purge_every_s)


def install(app: FastAPI, settings: Settings) -> None:
    """Add the trace routes and the UI; at start-up begin retention and, when configured, OTel export (once per app)."""
    if getattr(app.state, "traces_installed", False):
        return
    app.state.traces_installed = True
    app.include_router(router)
    app.include_router(ui_router)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with inner(a) as value:
            state: AppState = a.state.wp
            exporter = OTelExporter.from_config(settings.otel)
            if exporter is not None:
                state.deps.run = exporting(state.deps.run, exporter)
            task = asyncio.create_task(_retention_loop(state.store, settings.traces), name="trace-retention")
            try:
                yield value
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                if exporter is not None:
                    await asyncio.to_thread(exporter.shutdown)

    app.router.lifespan_context = lifespan
