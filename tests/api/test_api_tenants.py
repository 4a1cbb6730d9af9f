"""API keys map to tenants; every endpoint but health needs a key; a tenant sees only its own things."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from apitest_support import MemoryDocuments, ScriptedRun, deps_factory, wait_job
from fastapi import FastAPI

from api.app import create_app
from api.deps import AppDeps
from api.tenants import KeyFileError, KeyRing
from knowledge.settings import Settings

A = {"Authorization": "Bearer key-a"}
B = {"X-API-Key": "key-b"}


@pytest.fixture
def keyed_app(api_settings: Settings, tmp_path: Path, run_fn: ScriptedRun, documents: MemoryDocuments) -> FastAPI:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-a": "alpha", "key-b": "beta"}))
    settings = api_settings.model_copy(update={"api": api_settings.api.model_copy(update={"api_keys_file": keys})})
    return create_app(settings, deps_factory=deps_factory(AppDeps(run=run_fn, documents=documents)))


@pytest.fixture
async def kc(keyed_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with keyed_app.router.lifespan_context(keyed_app):
        transport = httpx.ASGITransport(app=keyed_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


PROTECTED = [
    ("POST", "/v1/chat"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/models"),
    ("GET", "/v1/runs/x"),
    ("GET", "/v1/runs/x/events"),
    ("GET", "/v1/threads/x"),
    ("GET", "/v1/documents"),
    ("POST", "/v1/documents"),
    ("DELETE", "/v1/documents/x"),
    ("GET", "/v1/jobs/x"),
    ("GET", "/metrics"),
]


@pytest.mark.parametrize(("method", "path"), PROTECTED)
async def test_every_endpoint_but_health_needs_a_valid_key(kc: httpx.AsyncClient, method: str, path: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Key": ""}):
        resp = await kc.request(method, path, headers=headers)
        assert resp.status_code == 401, (headers, resp.text)
        assert resp.json()["error"]["type"] == "unauthorized"


async def test_health_needs_no_key(kc: httpx.AsyncClient) -> None:
    assert (await kc.get("/healthz")).status_code == 200
    assert (await kc.get("/readyz")).status_code == 200


async def test_runs_threads_and_events_are_tenant_scoped(kc: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    resp = await kc.post("/v1/chat", json={"message": "secret question"}, headers=A)
    run_id, thread_id = resp.headers["x-run-id"], resp.headers["x-thread-id"]
    assert run_fn.specs[-1].tenant == "alpha"
    assert (await kc.get(f"/v1/runs/{run_id}", headers=A)).status_code == 200
    for path in (f"/v1/runs/{run_id}", f"/v1/runs/{run_id}/events", f"/v1/threads/{thread_id}"):
        other = await kc.get(path, headers=B)
        assert other.status_code == 404 and "secret" not in other.text
    hijack = await kc.post("/v1/chat", json={"message": "q", "thread_id": thread_id}, headers=B)
    assert hijack.status_code == 404
    assert len(run_fn.specs) == 1
    compat = await kc.post(
        "/v1/chat/completions",
        json={"model": "waypoint-agent", "messages": [{"role": "user", "content": "q"}], "thread_id": thread_id},
        headers=B,
    )
    assert compat.status_code == 404


async def test_documents_and_jobs_are_tenant_scoped(kc: httpx.AsyncClient, documents: MemoryDocuments) -> None:
    up = await kc.post(
        "/v1/documents", files=[("files", ("alpha-notes.md", b"# Notes\nhello", "text/markdown"))], headers=A
    )
    assert up.status_code == 202
    job_id = up.json()["id"]
    assert (await kc.get(f"/v1/jobs/{job_id}", headers=B)).status_code == 404
    assert (await wait_job(kc, job_id, A))["status"] == "done"
    listed_a = (await kc.get("/v1/documents", headers=A)).json()["documents"]
    assert [d["id"] for d in listed_a] == ["000_alpha-notes"]
    assert (await kc.get("/v1/documents", headers=B)).json()["documents"] == []
    assert (await kc.delete("/v1/documents/000_alpha-notes", headers=B)).status_code == 404
    assert "000_alpha-notes" in documents.docs["alpha"]
    assert (await kc.delete("/v1/documents/000_alpha-notes", headers=A)).status_code == 204
    assert documents.docs["alpha"] == {}


def test_key_file_errors_are_typed(tmp_path: Path) -> None:
    bad = tmp_path / "keys.json"
    bad.write_text('["not", "a", "map"]')
    with pytest.raises(KeyFileError, match="must map"):
        KeyRing.from_file(bad)
    bad.write_text('{"k": "../etc"}')
    with pytest.raises(KeyFileError, match="bad tenant names"):
        KeyRing.from_file(bad)
    with pytest.raises(KeyFileError, match="cannot read"):
        KeyRing.from_file(tmp_path / "missing.json")


def test_without_keys_everyone_is_the_default_tenant() -> None:
    ring = KeyRing({}, default_tenant="local")
    assert not ring.enabled
    assert ring.tenant_for(None) == "local" and ring.tenant_for("anything") == "local"
