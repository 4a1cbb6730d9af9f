"""The FastAPI app factory: dependencies come in, routes, limits, metrics and error handlers go on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI

from api.admission import admission_for
from api.deps import DepsFactory
from api.errors import install_error_handlers
from api.guard import BrowserGuard, allowed_hosts
from api.lease import keep_lease, renew
from api.limits import BodySizeLimit
from api.metrics import Metrics, RequestMetrics
from api.routes import chat, chat_completions, documents, ops, runs, traces
from api.sglang_metrics import SGLangScrape, metrics_targets
from api.state import AppState
from api.state_stores import open_state_stores
from api.tenants import KeyRing
from graphs.stores import open_trace_store
from knowledge.owners import Owner
from knowledge.settings import Settings

if TYPE_CHECKING:
    from api.ingest_queue import IngestQueue

log = logging.getLogger(__name__)


def create_app(settings: Settings, *, deps_factory: DepsFactory | None = None) -> FastAPI:
    """Build the app; ``deps_factory`` opens the LLM and stores at start-up (default: the embedded stack)."""
    if deps_factory is None:
        from api.wiring import open_app_deps

        deps_factory = open_app_deps
    keyring = KeyRing.from_file(settings.api.api_keys_file, default_tenant=settings.default_tenant)
    targets = metrics_targets(settings.llm)
    metrics = Metrics(SGLangScrape(targets, timeout_s=settings.llm.scrape_timeout_s) if targets else None)
    factory = deps_factory

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owner = Owner.this_process()
        stores = await asyncio.to_thread(open_state_stores, settings, owner)
        queue = None
        try:
            if settings.ingest.queue == "postgres":
                queue = await open_ingest_queue(settings, stores.pool)
            async with factory(settings) as deps, AsyncExitStack() as own:
                store = deps.traces
                if store is None:  # a factory without services (tests): the app keeps its own
                    store = open_trace_store(settings)
                    own.callback(store.close)
                state = AppState(
                    settings=settings,
                    deps=deps,
                    admission=admission_for(settings.api, deps.llm_slots, metrics),
                    store=store,
                    jobs=stores.jobs,
                    metrics=metrics,
                    keyring=keyring,
                    owner=owner,
                    queue=queue,
                )
                app.state.wp = state
                await asyncio.to_thread(renew, state)  # close out the runs of processes that died (kill -9)
                lease = asyncio.create_task(keep_lease(state), name="state-lease")
                try:
                    yield
                finally:
                    lease.cancel()
                    await asyncio.gather(lease, return_exceptions=True)
                state.streams.drain()
                await _cancel_jobs(state)
                await state.ready.aclose()
        finally:
            if queue is not None:
                await queue.close()
            stores.close()

    app = FastAPI(
        title="Waypoint",
        version="0.1.0",
        summary="Agentic RAG over hybrid vector, knowledge-graph and tree-search retrieval, served over SSE.",
        lifespan=lifespan,
    )
    app.state.keyring = keyring
    for module in (ops, chat, chat_completions, runs, documents):
        app.include_router(module.router)
    traces.install(app, settings)  # trace viewer: /v1/runs list, spans, /ui, retention, OTel export
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_body=settings.api.max_request_bytes, max_upload=settings.api.max_upload_bytes)
    app.add_middleware(RequestMetrics, metrics=metrics)
    cfg = settings.api
    hosts = allowed_hosts(cfg.host, cfg.allowed_hosts)
    if keyring.enabled and not cfg.allowed_hosts:
        hosts = None  # with keys a rebound page has no key to send: the Host check is opt-in (allowed_hosts)
    app.add_middleware(BrowserGuard, hosts=hosts, check_origin=not keyring.enabled, origins=cfg.allowed_origins)
    return app


async def open_ingest_queue(settings: Settings, pool: object) -> IngestQueue:
    """The durable ingest queue on the state database (``ingest.queue = "postgres"`` needs ``postgres_url``)."""
    from api.ingest_queue import IngestQueue

    if pool is None or settings.postgres_url is None:
        raise RuntimeError("ingest.queue = 'postgres' needs WAYPOINT_POSTGRES_URL")
    queue = IngestQueue(settings.postgres_url, pool)
    await queue.open()
    return queue


async def _cancel_jobs(state: AppState) -> None:
    for task in list(state.tasks):
        task.cancel()
    await asyncio.gather(*state.tasks, return_exceptions=True)
