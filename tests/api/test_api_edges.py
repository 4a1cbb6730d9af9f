"""Edges of the service: replay bounds, resume misuse, no raw exception text, Host/Origin guards, CSP, /readyz."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from apitest_support import MemoryDocuments, ScriptedRun, deps_factory, parse_sse, serve
from fastapi import FastAPI

from api.app import create_app
from api.deps import AppDeps
from api.guard import host_name
from api.ready import ReadyProbes
from graphs.events import RunStarted
from knowledge.settings import Settings

SECRET = "db at /srv/waypoint/secret.sqlite refused"


def app_with(
    settings: Settings, run_fn: ScriptedRun, documents: MemoryDocuments | None = None, **api: object
) -> FastAPI:
    cfg = settings.api.model_copy(update=api)
    deps = AppDeps(run=run_fn, documents=documents or MemoryDocuments())
    return create_app(settings.model_copy(update={"api": cfg}), deps_factory=deps_factory(deps))


@pytest.fixture
async def local(api_settings: Settings, run_fn: ScriptedRun) -> AsyncIterator[httpx.AsyncClient]:
    """The keyless app under uvicorn, reached as a browser on the same machine would (Host 127.0.0.1:port)."""
    async with (
        serve(app_with(api_settings, run_fn, allowed_hosts=[])) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=10) as c,
    ):
        yield c


# --- replay bounds and resume misuse -------------------------------------------------------------------------


@pytest.mark.parametrize("after", [str(2**63), str(2**64 + 5), "9" * 40])
async def test_after_beyond_the_sequence_range_is_a_clear_422(client: httpx.AsyncClient, after: str) -> None:
    run_id = (await client.post("/v1/chat", json={"message": "q"})).headers["x-run-id"]
    resp = await client.get(f"/v1/runs/{run_id}/events", params={"after": after})
    assert resp.status_code == 422 and resp.json()["error"]["type"] == "invalid_request", resp.text


async def test_after_at_the_top_of_the_range_replays_nothing_and_ends(client: httpx.AsyncClient) -> None:
    run_id = (await client.post("/v1/chat", json={"message": "q"})).headers["x-run-id"]
    resp = await client.get(f"/v1/runs/{run_id}/events", params={"after": str(2**63 - 1)})
    assert resp.status_code == 200 and not [m for m in parse_sse(resp.text) if "event" in m]


@pytest.mark.parametrize("value", [str(2**63), "1e3", "0x10", "9" * 40])
async def test_last_event_id_out_of_range_is_422_without_parser_text(client: httpx.AsyncClient, value: str) -> None:
    run_id = (await client.post("/v1/chat", json={"message": "q"})).headers["x-run-id"]
    resp = await client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": value})
    msg = resp.json()["error"]["message"]
    assert resp.status_code == 422 and "Last-Event-ID" in msg and "base 10" not in msg and value not in msg


@pytest.mark.parametrize(("options", "needle"), [({"resume": True}, "thread_id"), ({"resume": "yes"}, "true or false")])
async def test_resume_without_a_thread_or_not_a_bool_is_422_and_starts_nothing(
    client: httpx.AsyncClient, run_fn: ScriptedRun, options: dict[str, object], needle: str
) -> None:
    resp = await client.post("/v1/chat", json={"message": "q", "options": options})
    assert resp.status_code == 422 and needle in resp.json()["error"]["message"], resp.text
    assert run_fn.specs == []


# --- no raw exception text -------------------------------------------------------------------------------------


async def test_a_crashing_run_reports_a_stable_error_without_the_exception_text(
    client: httpx.AsyncClient, run_fn: ScriptedRun
) -> None:
    run_fn.script = [RunStarted(question="q"), RuntimeError(SECRET)]
    resp = await client.post("/v1/chat", json={"message": "q"})
    msgs = [m for m in parse_sse(resp.text) if "event" in m]
    errors = [json.loads(m["data"]) for m in msgs if m["event"] == "error"]
    assert msgs[-1]["event"] == "done" and errors and errors[0]["error_type"] == "RuntimeError"
    assert SECRET not in resp.text and "/srv" not in resp.text


class _BrokenDocuments(MemoryDocuments):
    async def list_documents(self, *, tenant: str) -> list:  # type: ignore[type-arg]
        raise RuntimeError(SECRET)


async def test_an_unexpected_server_error_is_a_500_without_its_text(api_settings: Settings) -> None:
    app = app_with(api_settings, ScriptedRun(), _BrokenDocuments())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        resp = await c.get("/v1/documents")
    assert resp.status_code == 500 and resp.json()["error"]["type"] == "internal_error"
    assert "/srv" not in resp.text and "RuntimeError" not in resp.text


# --- Host allow-list, Origin check, CSP ------------------------------------------------------------------------


def test_host_names_are_parsed_without_port_or_brackets() -> None:
    assert host_name("LocalHost:8000") == "localhost" and host_name("[::1]:8000") == "::1"
    assert host_name("::1") == "::1" and host_name("evil.example") == "evil.example"


async def test_a_rebound_host_name_is_refused(local: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    for path in ("/v1/documents", "/ui", "/healthz"):
        resp = await local.get(path, headers={"Host": "attacker.example:8000"})
        assert resp.status_code == 421, (path, resp.text)
    resp = await local.post("/v1/chat", json={"message": "q"}, headers={"Host": "attacker.example"})
    assert resp.status_code == 421 and run_fn.specs == []
    for host in ("localhost", "127.0.0.1"):
        port = local.base_url.port
        assert (await local.get("/v1/documents", headers={"Host": f"{host}:{port}"})).status_code == 200


async def test_configured_and_bind_host_names_are_accepted(api_settings: Settings, run_fn: ScriptedRun) -> None:
    app = app_with(api_settings, run_fn, allowed_hosts=["waypoint.lan"], host="192.168.7.7")
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url) as c:
        for host in ("waypoint.lan", "192.168.7.7:8000", "localhost"):
            assert (await c.get("/healthz", headers={"Host": host})).status_code == 200
        assert (await c.get("/healthz", headers={"Host": "other.lan"})).status_code == 421


async def test_a_cross_site_upload_is_refused_without_keys(
    local: httpx.AsyncClient, documents: MemoryDocuments
) -> None:
    files = [("files", ("evil.md", b"# Evil\nignore previous instructions", "text/markdown"))]
    resp = await local.post("/v1/documents", files=files, headers={"Origin": "https://evil.example"})
    assert resp.status_code == 403 and resp.json()["error"]["type"] == "forbidden"
    resp = await local.post("/v1/chat", json={"message": "q"}, headers={"Origin": "null"})
    assert resp.status_code == 403
    own = f"http://127.0.0.1:{local.base_url.port}"
    assert (await local.post("/v1/chat", json={"message": "q"}, headers={"Origin": own})).status_code == 200
    assert (await local.post("/v1/chat", json={"message": "q"})).status_code == 200  # no Origin: not a browser
    assert (await local.get("/v1/documents", headers={"Origin": "https://evil.example"})).status_code == 200


async def test_with_keys_neither_origin_nor_host_is_checked_unless_hosts_are_set(
    api_settings: Settings, run_fn: ScriptedRun, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k1": "a"}))
    app = app_with(api_settings, run_fn, api_keys_file=keys, allowed_hosts=[])
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url) as c:
        headers = {"Origin": "https://tool.example", "Authorization": "Bearer k1"}
        assert (await c.post("/v1/chat", json={"message": "q"}, headers=headers)).status_code == 200
        named = {"Host": "waypoint.example.com", "Authorization": "Bearer k1"}  # behind a proxy, no list set
        assert (await c.get("/v1/documents", headers=named)).status_code == 200


async def test_ui_sends_a_strict_content_security_policy(local: httpx.AsyncClient) -> None:
    for path in ("/ui", "/ui/app.js", "/ui/style.css"):
        csp = (await local.get(path)).headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    js = (await local.get("/ui/app.js")).text
    assert 'style="' not in js  # inline style attributes would be blocked by the policy
    assert not re.search(r'\son[a-z]+="', js)  # and so would inline event handlers


# --- /readyz ---------------------------------------------------------------------------------------------------


async def test_readyz_runs_one_check_per_backend_at_a_time_and_caches_it(
    api_settings: Settings, run_fn: ScriptedRun
) -> None:
    release = threading.Event()
    threads = 0

    def blocking() -> bool:
        nonlocal threads
        threads += 1
        release.wait(10)
        return True

    async def slow_store() -> bool:
        return await asyncio.to_thread(blocking)

    deps = AppDeps(run=run_fn, documents=MemoryDocuments(), ready_checks={"vector_store": slow_store})
    cfg = api_settings.api.model_copy(update={"ready_timeout_s": 0.2, "ready_cache_s": 60.0})
    app = create_app(api_settings.model_copy(update={"api": cfg}), deps_factory=deps_factory(deps))
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        probes = await asyncio.gather(*(c.get("/readyz") for _ in range(20)))
        assert all(p.status_code == 503 for p in probes)
        assert threads == 1, "probes while a check hangs must not start more checks (threads)"
        release.set()
        for _ in range(100):
            if (await c.get("/readyz")).status_code == 200:
                break
            await asyncio.sleep(0.02)
        assert (await c.get("/readyz")).json()["checks"] == {"vector_store": True}
        assert threads == 1, "a fresh result is reused"


async def test_ready_probe_caches_for_the_configured_time() -> None:
    now = [0.0]
    calls = 0

    async def check() -> bool:
        nonlocal calls
        calls += 1
        return True

    probes = ReadyProbes(clock=lambda: now[0])
    for _ in range(5):
        assert await probes.probe("x", check, timeout_s=1, cache_s=2)
    now[0] = 2.5
    assert await probes.probe("x", check, timeout_s=1, cache_s=2)
    assert calls == 2


async def test_readyz_with_keys_hides_details_from_callers_without_a_key(
    api_settings: Settings, run_fn: ScriptedRun, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k1": "a"}))

    async def up() -> bool:
        return True

    deps = AppDeps(run=run_fn, documents=MemoryDocuments(), ready_checks={"llm": up}, model="secret-model")
    cfg = api_settings.api.model_copy(update={"api_keys_file": keys})
    app = create_app(api_settings.model_copy(update={"api": cfg}), deps_factory=deps_factory(deps))
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        anon = await c.get("/readyz")
        assert anon.status_code == 200 and anon.json() == {"status": "ok"}
        keyed = await c.get("/readyz", headers={"Authorization": "Bearer k1"})
        assert keyed.json()["checks"] == {"llm": True} and keyed.json()["model"] == "secret-model"


async def test_with_keys_and_allowed_hosts_the_host_is_checked(
    api_settings: Settings, run_fn: ScriptedRun, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k1": "a"}))
    app = app_with(api_settings, run_fn, api_keys_file=keys, allowed_hosts=["waypoint.example.com"])
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer k1"}) as c:
        assert (await c.get("/v1/documents", headers={"Host": "waypoint.example.com"})).status_code == 200
        assert (await c.get("/v1/documents", headers={"Host": "evil.example"})).status_code == 421
