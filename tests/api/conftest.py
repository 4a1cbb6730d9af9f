"""Fixtures of the API tests: the app with scripted deps, over ASGI and over uvicorn."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from apitest_support import MemoryDocuments, ScriptedRun, deps_factory, serve
from fastapi import FastAPI

from api.app import create_app
from api.deps import AppDeps
from knowledge.settings import Settings


@pytest.fixture
def api_settings(settings: Settings) -> Settings:
    """Settings with fast pings and replay polling."""
    api = settings.api.model_copy(update={"sse_ping_s": 0.2, "replay_poll_s": 0.02, "shutdown_grace_s": 1.0})
    return settings.model_copy(update={"api": api})


@pytest.fixture
def run_fn() -> ScriptedRun:
    return ScriptedRun()


@pytest.fixture
def documents() -> MemoryDocuments:
    return MemoryDocuments()


@pytest.fixture
def app(api_settings: Settings, run_fn: ScriptedRun, documents: MemoryDocuments) -> FastAPI:
    deps = AppDeps(run=run_fn, documents=documents, tool_names=["vector_search", "graph_search", "tree_search"])
    return create_app(api_settings, deps_factory=deps_factory(deps))


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app over ASGI (buffered responses), lifespan running."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


@pytest.fixture
async def live(app: FastAPI) -> AsyncIterator[str]:
    """The app under uvicorn (real streaming); yields its base URL."""
    async with serve(app) as (url, _):
        yield url
