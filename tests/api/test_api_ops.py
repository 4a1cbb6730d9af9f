"""Operations: health, readiness, metrics, OpenAPI, structured logs, the serve command's helpers."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from apitest_support import MemoryDocuments, ScriptedRun, deps_factory
from fastapi import FastAPI

from api.app import create_app
from api.deps import AppDeps, DocumentInfo
from api.logs import JSONFormatter
from cli.serve import ingest_sample, is_loopback, sample_documents
from knowledge.settings import Settings


async def test_readyz_names_the_backend_that_is_down(api_settings: Settings, run_fn: ScriptedRun) -> None:
    async def up() -> bool:
        return True

    async def down() -> bool:
        raise ConnectionError("refused")

    deps = AppDeps(run=run_fn, documents=MemoryDocuments(), ready_checks={"llm": up, "vector_store": down})
    app = create_app(api_settings, deps_factory=deps_factory(deps))
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        resp = await c.get("/readyz")
        assert resp.status_code == 503
        assert resp.json()["checks"] == {"llm": True, "vector_store": False}
        assert (await c.get("/healthz")).json() == {"status": "ok"}


async def test_metrics_count_requests_runs_llm_tokens_and_errors(client: httpx.AsyncClient) -> None:
    await client.post("/v1/chat", json={"message": "q"})
    await client.get("/v1/runs/nope")
    text = (await client.get("/metrics")).text
    assert 'waypoint_http_requests_total{method="POST",route="/v1/chat",status="200"} 1.0' in text
    assert 'waypoint_http_requests_total{method="GET",route="/v1/runs/{run_id}",status="404"} 1.0' in text
    assert 'waypoint_runs_total{status="ok"} 1.0' in text
    assert 'waypoint_llm_calls_total{role="answerer"} 1.0' in text
    assert 'waypoint_llm_tokens_total{kind="cached"} 20.0' in text
    assert "waypoint_run_duration_seconds_count 1.0" in text


async def test_openapi_schema_lists_the_endpoints(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    for path in ("/v1/chat", "/v1/chat/completions", "/v1/documents", "/v1/jobs/{job_id}", "/v1/threads/{thread_id}"):
        assert path in paths
    assert "text/event-stream" in paths["/v1/chat"]["post"]["responses"]["200"]["content"]


def test_log_records_are_json_with_run_ids() -> None:
    record = logging.LogRecord("api.start", logging.INFO, __file__, 1, "run %s", ("started",), None)
    record.run_id = "run_1"
    line = json.loads(JSONFormatter().format(record))
    assert line["message"] == "run started" and line["run_id"] == "run_1" and line["level"] == "info"


def test_loopback_detection() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3") and not is_loopback("example.org")


async def test_sample_is_ingested_once(api_settings: Settings) -> None:
    docs = MemoryDocuments()
    assert await ingest_sample(docs, api_settings)
    assert not await ingest_sample(docs, api_settings)
    stored = await docs.list_documents(tenant=api_settings.default_tenant)
    assert sorted(d.id for d in stored) == sorted(p.stem for p in sample_documents())
    assert all(isinstance(d, DocumentInfo) for d in stored)


async def test_deps_are_closed_at_shutdown(api_settings: Settings, run_fn: ScriptedRun) -> None:
    events: list[str] = []

    @asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        events.append("open")
        yield AppDeps(run=run_fn, documents=MemoryDocuments())
        events.append("close")

    app: FastAPI = create_app(api_settings, deps_factory=factory)
    async with app.router.lifespan_context(app):
        assert events == ["open"]
    assert events == ["open", "close"]
