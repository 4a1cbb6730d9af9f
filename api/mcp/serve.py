"""Open the services once and serve the MCP tools over stdio or streamable HTTP.

This is the MCP front end's one tie to the composition root: ``open_state`` opens the same ``AppDeps``
as ``waypoint serve`` (``api.wiring.open_app_deps`` unless a factory is passed) plus the trace store
runs are recorded in, so the API and the MCP server over one data dir see the same documents and runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from starlette.types import ASGIApp

from api.admission import admission_for
from api.deps import DepsFactory
from api.mcp.access import Access, KeyGuard
from api.mcp.ingest import PathPolicy
from api.mcp.server import build_server
from api.metrics import Metrics
from api.state import AppState
from api.state_stores import open_state_stores
from api.tenants import KeyRing
from graphs.stores import open_trace_store
from knowledge.owners import Owner
from knowledge.settings import Settings

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
"""Where the streamable HTTP endpoint is mounted."""


def keyring_of(settings: Settings) -> KeyRing:
    """The API's key → tenant mapping (``api.api_keys_file``; none: one default tenant)."""
    return KeyRing.from_file(settings.api.api_keys_file, default_tenant=settings.default_tenant)


@asynccontextmanager
async def open_state(settings: Settings, *, deps_factory: DepsFactory | None = None) -> AsyncIterator[AppState]:
    """The LLM, stores and ingestor (as for the API), the trace store and the run bookkeeping; closed at the end."""
    if deps_factory is None:
        from api.wiring import open_app_deps

        deps_factory = open_app_deps
    keyring = keyring_of(settings)
    owner = Owner.this_process()
    stores = await asyncio.to_thread(open_state_stores, settings, owner)
    try:
        async with deps_factory(settings) as deps, AsyncExitStack() as own:
            store = deps.traces
            if store is None:  # a factory without services (tests): keep an own trace store
                store = open_trace_store(settings)
                own.callback(store.close)
            metrics = Metrics()
            state = AppState(
                settings=settings,
                deps=deps,
                admission=admission_for(settings.api, deps.llm_slots, metrics),  # as for HTTP runs
                store=store,
                jobs=stores.jobs,
                metrics=metrics,
                keyring=keyring,
                owner=owner,
            )
            try:
                yield state
            finally:
                state.streams.drain()
    finally:
        stores.close()


def http_app(state: AppState, *, paths_roots: list[Path], host: str = "127.0.0.1") -> ASGIApp:
    """The streamable HTTP app at ``/mcp``: keys checked per request, file paths only under ``paths_roots``."""
    server = build_server(state, Access(state.keyring), PathPolicy.under(paths_roots))
    return KeyGuard(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host), state.keyring)


async def serve_http(
    settings: Settings,
    *,
    host: str,
    port: int,
    paths_roots: list[Path],
    deps_factory: DepsFactory | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` until interrupted."""
    import uvicorn

    keyring_of(settings)  # a bad key file fails before the model loads
    async with open_state(settings, deps_factory=deps_factory) as state:
        app = http_app(state, paths_roots=paths_roots, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="on", timeout_graceful_shutdown=5)
        log.info("MCP over streamable HTTP at http://%s:%d%s", host, port, MCP_PATH)
        await uvicorn.Server(config).serve(sockets=[sock] if sock is not None else None)


async def serve_stdio(
    settings: Settings, *, api_key: str | None, tenant: str | None, deps_factory: DepsFactory | None = None
) -> None:
    """Serve MCP over this process's stdin/stdout for one tenant (from ``api_key``, or ``tenant`` without keys)."""
    access = Access.for_stdio(keyring_of(settings), api_key=api_key, tenant=tenant)
    async with AsyncExitStack() as stack:
        with stdout_to_stderr():  # starting the LLM and stores must not write into the protocol stream
            state = await stack.enter_async_context(open_state(settings, deps_factory=deps_factory))
        server = build_server(state, access, PathPolicy.anywhere())
        await server.run_stdio_async()  # the SDK itself points fd 1 at stderr while it serves


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Point file descriptor 1 at stderr for the block (C libraries print there too), then restore it."""
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
