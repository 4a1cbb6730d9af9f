"""Trace viewer endpoints over ASGI: runs list, spans, agent graph, the UI files, tenants, retention at start-up."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from uitest_support import NoDocuments, agent_deps, agent_run_fn, deps_factory, envelopes, full_script

from api.app import create_app
from api.deps import AppDeps
from api.routes.traces import decode_cursor
from graphs.events import Done, LLMUsage, RunStarted
from graphs.tracing.store import TraceStore
from knowledge.owners import Owner
from knowledge.settings import Settings

KEYS = {"key-one": "one", "key-two": "two"}
ONE = {"Authorization": "Bearer key-one"}
TWO = {"Authorization": "Bearer key-two"}


@pytest.fixture
def keyed(settings: Settings, tmp_path: Path) -> Settings:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(KEYS))
    return settings.model_copy(update={"api": settings.api.model_copy(update={"api_keys_file": keys})})


def seed(settings: Settings) -> None:
    """Runs in the app's store before it starts: 5 finished for tenant one (one very old), 1 running, 1 of two."""
    store = TraceStore.open(settings.path("runs.sqlite"))
    now = time.time()
    for i in range(5):
        rid = f"one-{i}"
        started = now - 100 + i if i else now - 400 * 86400
        store.start_run(
            run_id=rid, tenant="one", question=f"question {i}", thread_id="ta" if i % 2 else "tb", started_at=started
        )
        script = [
            (started, RunStarted(question="q")),
            (started + 1, LLMUsage(role="answerer", prompt_tokens=40, cached_tokens=30, completion_tokens=5)),
            (started + 2, Done(status="ok")),
        ]
        for env in envelopes(rid, script):
            store.append(env)
    elsewhere = Owner(id="replica-b", host="elsewhere", pid=1, started_at=now)  # a live process runs it
    store.heartbeat(elsewhere)
    store.start_run(run_id="live-1", tenant="one", question="still going", started_at=now - 1, owner=elsewhere.id)
    for env in envelopes("live-1", full_script()[:9], shift=now - 100.0):
        store.append(env)
    store.start_run(run_id="two-0", tenant="two", question="secret", started_at=now - 5, owner=elsewhere.id)
    store.close()


@pytest.fixture
async def client(keyed: Settings) -> AsyncIterator[httpx.AsyncClient]:
    seed(keyed)
    deps = AppDeps(run=agent_run_fn(agent_deps(keyed, delay_s=0.0)), documents=NoDocuments())
    app: FastAPI = create_app(keyed, deps_factory=deps_factory(deps))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


async def test_list_runs_newest_first_with_usage(client: httpx.AsyncClient) -> None:
    res = await client.get("/v1/runs", headers=ONE)
    assert res.status_code == 200
    runs = res.json()["runs"]
    # one-0 was 400 days old: retention (30 days) removed it at start-up
    assert [r["run_id"] for r in runs] == ["live-1", "one-4", "one-3", "one-2", "one-1"]
    live, done = runs[0], runs[1]
    assert live["status"] == "running" and live["duration_s"] is None and live["llm_calls"] == 2
    assert (done["llm_calls"], done["prompt_tokens"], done["cached_share"]) == (1, 40, 0.75)
    assert done["duration_s"] == pytest.approx(2.0)


async def test_pagination_and_filters(client: httpx.AsyncClient) -> None:
    first = (await client.get("/v1/runs", params={"limit": 2}, headers=ONE)).json()
    assert len(first["runs"]) == 2 and first["next_cursor"]
    second = (await client.get("/v1/runs", params={"limit": 2, "cursor": first["next_cursor"]}, headers=ONE)).json()
    third = (await client.get("/v1/runs", params={"limit": 2, "cursor": second["next_cursor"]}, headers=ONE)).json()
    ids = [r["run_id"] for page in (first, second, third) for r in page["runs"]]
    assert ids == ["live-1", "one-4", "one-3", "one-2", "one-1"] and third["next_cursor"] is None
    ta = (await client.get("/v1/runs", params={"thread_id": "ta"}, headers=ONE)).json()["runs"]
    assert [r["run_id"] for r in ta] == ["one-3", "one-1"]
    running = (await client.get("/v1/runs", params={"status": "running"}, headers=ONE)).json()["runs"]
    assert [r["run_id"] for r in running] == ["live-1"]
    cut = ta[0]["started_at"]
    newer = (await client.get("/v1/runs", params={"since": cut}, headers=ONE)).json()["runs"]
    assert [r["run_id"] for r in newer] == ["live-1", "one-4", "one-3"]


async def test_bad_list_requests_are_422(client: httpx.AsyncClient) -> None:
    for params in ({"cursor": "not-a-cursor!"}, {"status": "weird"}, {"limit": 0}, {"limit": 1000}):
        res = await client.get("/v1/runs", params=params, headers=ONE)
        assert res.status_code == 422, params
        assert res.json()["error"]["type"] == "invalid_request"
    with pytest.raises(ValueError, match="bad cursor"):
        decode_cursor("%%%")


async def test_tenants_are_isolated(client: httpx.AsyncClient) -> None:
    two = (await client.get("/v1/runs", headers=TWO)).json()["runs"]
    assert [r["run_id"] for r in two] == ["two-0"]
    assert (await client.get("/v1/runs/two-0/spans", headers=ONE)).status_code == 404
    assert (await client.get("/v1/runs/one-1/spans", headers=TWO)).status_code == 404
    assert (await client.get("/v1/runs")).status_code == 401


async def test_spans_of_a_running_run(client: httpx.AsyncClient) -> None:
    res = await client.get("/v1/runs/live-1/spans", headers=ONE)
    assert res.status_code == 200
    body = res.json()
    assert body["run"]["status"] == "running"
    trace = body["trace"]
    assert trace["path"] == ["plan", "route", "retrieve"]
    assert trace["spans"][0]["end"] is None
    assert [s["status"] for s in trace["spans"] if s["kind"] == "step"] == ["ok", "ok", "running"]


async def test_spans_of_a_chat_run(client: httpx.AsyncClient) -> None:
    res = await client.post("/v1/chat", json={"message": "What is the capital of France?"}, headers=ONE)
    assert res.status_code == 200
    body = (await client.get(f"/v1/runs/{res.headers['x-run-id']}/spans", headers=ONE)).json()
    trace = body["trace"]
    assert body["run"]["status"] == "ok"
    assert trace["path"][:4] == ["plan", "route", "retrieve", "grade"]
    tools = [s for s in trace["spans"] if s["kind"] == "tool"]
    assert {t["name"] for t in tools} == {"keyword_a", "keyword_b"}
    assert trace["usage"]["llm_calls"] == sum(1 for s in trace["spans"] if s["kind"] == "llm") > 0


async def test_agent_graph(client: httpx.AsyncClient) -> None:
    graph = (await client.get("/v1/agent/graph", headers=ONE)).json()
    assert graph["nodes"][0] == "plan" and ["decide", "compact"] in graph["edges"]


async def test_ui_files_are_served_without_a_key(client: httpx.AsyncClient) -> None:
    page = await client.get("/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/ui/app.js">' in page.text
    js = await client.get("/ui/app.js")
    assert js.headers["content-type"].startswith("text/javascript") and "renderRun" in js.text
    assert (await client.get("/ui/style.css")).headers["content-type"].startswith("text/css")
    assert (await client.get("/ui/__init__.py")).status_code == 404
    assert (await client.get("/ui/..%2Fapp.py")).status_code == 404
    assert (await client.get("/ui/", follow_redirects=False)).status_code == 307


def test_install_is_idempotent(settings: Settings) -> None:
    from api.routes import traces

    deps = AppDeps(run=agent_run_fn(agent_deps(settings)), documents=NoDocuments())
    app = create_app(settings, deps_factory=deps_factory(deps))
    lifespan = app.router.lifespan_context
    traces.install(app, settings)  # ``waypoint serve`` calls it again
    included = [getattr(r, "original_router", None) for r in app.routes]
    assert included.count(traces.router) == 1 and included.count(traces.ui_router) == 1
    assert "/v1/runs" in app.openapi()["paths"]
    assert app.router.lifespan_context is lifespan
