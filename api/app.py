"""The FastAPI app factory: dependencies come in, routes, limits, metrics and error handlers go on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from api.deps import DepsFactory
from api.errors import install_error_handlers
from api.guard import BrowserGuard, allowed_hosts
from api.jobs import JobStore
from api.limits import BodySizeLimit
from api.metrics import Metrics, RequestMetrics
from api.routes import chat, documents, openai_compat, ops, runs, traces
from api.state import AppState
from api.tenants import KeyRing
from graphs.trace_store import TraceStore
from knowledge.settings import Settings

log = logging.getLogger(__name__)


def create_app(settings: Settings, *, deps_factory: DepsFactory | None = None) -> FastAPI:
    """Build the app; ``deps_factory`` opens the LLM and stores at start-up (default: the embedded stack)."""
    if deps_factory is None:
        from api.wiring import open_app_deps

        deps_factory = open_app_deps
    keyring = KeyRing.from_file(settings.api.api_keys_file, default_tenant=settings.default_tenant)
    metrics = Metrics()
    factory = deps_factory

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = TraceStore.open(settings.path("runs.sqlite"))
        jobs = JobStore(settings.path("jobs.sqlite"))
        try:
            async with factory(settings) as deps:
                state = AppState(settings=settings, deps=deps, store=store, jobs=jobs, metrics=metrics, keyring=keyring)
                app.state.wp = state
                yield
                state.streams.drain()
                await _cancel_jobs(state)
                await state.ready.aclose()
        finally:
            jobs.close()
            store.close()

    app = FastAPI(
        title="Waypoint",
        version="0.1.0",
        summary="Agentic RAG over hybrid vector, knowledge-graph and tree-search retrieval, served over SSE.",
        lifespan=lifespan,
    )
    app.state.keyring = keyring
    for module in (ops, chat, openai_compat, runs, documents):
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


async def _cancel_jobs(state: AppState) -> None:
    for task in list(state.tasks):
        task.cancel()
    await asyncio.gather(*state.tasks, return_exceptions=True)
