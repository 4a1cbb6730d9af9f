"""Tenant isolation over EVERY route: tenant B can neither read, list, cancel, replay, resume, search, delete nor
infer the existence of anything of tenant A's.

The routes are enumerated from the app itself: a new route fails ``test_every_route_is_classified`` until it is
given a probe here. The probes run on the default wiring (real runner, checkpointer, MiniLM, Qdrant local,
FalkorDB, trace and job stores) under uvicorn, against the stub OpenAI-compatible LLM server process, with two
keys. "Not yours" must look exactly like "does not exist": the same status and the same body once the id is
masked. The prefix cache is probed as a tenant could: B's cached tokens for A's exact question must equal those
for a fresh question.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from apitest_support import parse_sse, serve, wait_job
from fastapi import FastAPI
from support.llm_process import StubLLM, stub_llm
from test_api_real_stack import real_app

from agents.llm import OpenAICompatibleLLM
from knowledge.settings import Settings

pytestmark = pytest.mark.integration

A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}
A_QUESTION = "Did the board approve the confidential Kestrel Ford merger in March?"
FRESH_QUESTION = "Which colour is the lighthouse at Harrow Point today?"
SLOW_QUESTION = "Summarise the harbour tide tables slowly"
A_DOC = ("kestrel-merger.md", b"# Kestrel merger\n\nThe board of Kestrel Ford approved the merger with Sable Hold.\n")
B_DOC = ("kestrel-merger.md", b"# Garden notes\n\nTulips in April, roses in June.\n")
RULES = [
    {"match": {"schema_property": "needs_retrieval"}, "reply": '{"needs_retrieval": false, "subquestions": []}'},
]
SEARCH_RULES = [
    {
        "match": {"schema_property": "needs_retrieval"},
        "reply": '{"needs_retrieval": true, "subquestions": ["Did the Kestrel Ford board approve the merger?"]}',
    },
    {
        "match": {"schema_property": "query"},
        "reply": '{"tools": ["vector_search"], "query": "Kestrel Ford board merger", "reason": "facts"}',
    },
    {"match": {"schema_property": "relevant"}, "reply": '{"relevant": ["E1"], "answer": "unknown"}'},
    {"match": {"schema_property": "answerable"}, "reply": '{"answerable": true, "answer": "unknown"}'},
    {"match": {"schema_property": "supported"}, "reply": '{"supported": true, "unsupported_claims": []}'},
    {"match": {"schema_property": "note"}, "reply": '{"note": "nothing"}'},
]
STALL = [{"match": {"contains": SLOW_QUESTION, "no_schema": True}, "mode": "stall", "after_tokens": 1, "times": 1}]


Route = tuple[str, str]


def app_routes(app: FastAPI) -> set[Route]:
    """Every (method, path) the app answers, HEAD aside, however its routers were included."""
    out: set[Route] = set()

    def walk(routes: list[Any], prefix: str) -> None:
        for route in routes:
            if hasattr(route, "original_router"):  # FastAPI's included router
                ctx = getattr(route, "include_context", None)
                walk(route.original_router.routes, prefix + (getattr(ctx, "prefix", "") or ""))
            elif hasattr(route, "methods") and hasattr(route, "path"):
                out.update((m, prefix + route.path) for m in (route.methods or ()) if m != "HEAD")
            elif hasattr(route, "routes"):  # a Mount
                walk(route.routes, prefix + getattr(route, "path", ""))
            else:
                raise AssertionError(f"a route of unknown kind: {route!r}")

    walk(list(app.routes), "")
    return out


@dataclass
class World:
    """What tenant A owns, and the clients to probe it with."""

    c: httpx.AsyncClient
    stub: StubLLM
    run_id: str = ""
    thread_id: str = ""
    doc_id: str = ""
    job_id: str = ""
    live_run_id: str = ""
    secrets: list[str] = field(default_factory=list)
    probed: set[Route] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(what)

    def leaks(self, text: str) -> list[str]:
        return [s for s in self.secrets if s in text]

    async def stub_rules(self, rules: list[dict[str, Any]]) -> None:
        await asyncio.to_thread(self.stub.control, rules=rules)


def masked(resp: httpx.Response, ident: str) -> tuple[int, str]:
    return resp.status_code, resp.text.replace(ident, "<ID>")


async def same_as_missing(
    w: World, route: Route, call: Callable[[str], Awaitable[httpx.Response]], theirs: str, missing: str
) -> None:
    """B's answer for A's id is B's answer for an id nobody has: same status, same body (id masked), a 4xx."""
    got, none = await call(theirs), await call(missing)
    w.check(
        masked(got, theirs) == masked(none, missing),
        f"{route}: A's id {masked(got, theirs)} != {masked(none, missing)}",
    )
    w.check(got.status_code in (404, 422), f"{route}: B got {got.status_code} for A's id")
    leaked = [s for s in w.leaks(got.text) if s != theirs]  # the id B sent may come back: B knew it already
    w.check(not leaked, f"{route}: B's answer leaks {leaked}")


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex}"


async def probe_public(w: World, route: Route) -> None:
    method, path = route
    path = path.replace("{name}", "index.html")
    for headers in ({}, B):
        resp = await w.c.request(method, path, headers=headers)
        w.check(resp.status_code < 500, f"{route}: {resp.status_code}")
        w.check(not w.leaks(resp.text), f"{route}: leaks {w.leaks(resp.text)}")


async def probe_shared(w: World, route: Route) -> None:
    resp = await w.c.request(route[0], route[1], headers=B)
    w.check(resp.status_code == 200, f"{route}: B got {resp.status_code}")
    w.check(not w.leaks(resp.text), f"{route}: leaks {w.leaks(resp.text)}")


def by_id(method: str, template: str, key: str, prefix: str) -> Callable[[World, Route], Awaitable[None]]:
    async def probe(w: World, route: Route) -> None:
        theirs = getattr(w, key)
        await same_as_missing(
            w, route, lambda i: w.c.request(method, template.replace("{}", i), headers=B), theirs, new_id(prefix)
        )

    return probe


async def probe_cancel(w: World, route: Route) -> None:
    def call(run_id: str) -> Awaitable[httpx.Response]:
        return w.c.post(f"/v1/runs/{run_id}/cancel", headers=B)

    await same_as_missing(w, route, call, w.run_id, new_id("run_"))  # ended: not a 409 for B
    await same_as_missing(w, route, call, w.live_run_id, new_id("run_"))  # running: B cannot stop it
    run = (await w.c.get(f"/v1/runs/{w.live_run_id}", headers=A)).json()
    w.check(run["status"] == "running", f"{route}: A's live run is {run['status']!r} after B's cancel")


async def probe_delete_document(w: World, route: Route) -> None:
    before = (await w.c.get("/v1/documents", headers=A)).json()
    await same_as_missing(w, route, lambda i: w.c.delete(f"/v1/documents/{i}", headers=B), w.doc_id, "no-such-doc")
    after = (await w.c.get("/v1/documents", headers=A)).json()
    w.check(before == after, f"{route}: A's documents changed after B's delete")


async def probe_list_documents(w: World, route: Route) -> None:
    docs = (await w.c.get("/v1/documents", headers=B)).json()["documents"]
    w.check(all(d["source"] == B_DOC[0] and "Garden" in d["title"] for d in docs), f"{route}: B lists {docs}")
    w.check(not w.leaks(json.dumps(docs)), f"{route}: leaks {w.leaks(json.dumps(docs))}")


async def probe_list_runs(w: World, route: Route) -> None:
    mine = (await w.c.get("/v1/runs", headers=B)).json()["runs"]
    w.check(not w.leaks(json.dumps(mine)), f"{route}: B's list leaks {w.leaks(json.dumps(mine))}")
    w.check(bool(mine), f"{route}: B's own runs are missing")  # the list works, it only holds B's runs
    for query in ({"thread_id": w.thread_id}, {"status": "running"}, {"status": "ok"}):
        got = await w.c.get("/v1/runs", params=query, headers=B)
        w.check(not w.leaks(got.text), f"{route} {query}: leaks {w.leaks(got.text)}")

    async def filtered(thread: str) -> httpx.Response:
        return await w.c.get("/v1/runs", params={"thread_id": thread}, headers=B)

    theirs, missing = (await filtered(w.thread_id)).json(), (await filtered(new_id("th_"))).json()
    w.check(theirs == missing and theirs["runs"] == [], f"{route}: B filtering on A's thread: {theirs} vs {missing}")


async def probe_upload(w: World, route: Route) -> None:
    before = (await w.c.get("/v1/documents", headers=A)).json()
    up = await w.c.post("/v1/documents", files=[("files", (B_DOC[0], B_DOC[1], "text/markdown"))], headers=B)
    w.check(up.status_code == 202, f"{route}: B's upload {up.status_code}")
    job = await wait_job(w.c, up.json()["id"], B)
    w.check(job["status"] == "done", f"{route}: B's job {job}")
    after = (await w.c.get("/v1/documents", headers=A)).json()
    w.check(before == after, f"{route}: B's upload of the same name changed A's documents")


async def probe_chat(w: World, route: Route) -> None:
    for options in ({}, {"resume": True}):  # continue or resume A's thread: as if it did not exist

        def call(t: str, options: dict[str, Any] = options) -> Awaitable[httpx.Response]:
            body = {"message": "and then?", "thread_id": t, "options": options}
            return w.c.post("/v1/chat", json=body, headers=B)

        await same_as_missing(w, route, call, w.thread_id, new_id("th_"))
    # search: B's agent retrieves only B's documents, even for a question about A's
    await w.stub_rules(SEARCH_RULES)
    resp = await w.c.post("/v1/chat", json={"message": "Has the Kestrel Ford board approved the merger?"}, headers=B)
    await w.stub_rules(RULES)
    events = [(m["event"], json.loads(m["data"])) for m in parse_sse(resp.text) if "event" in m]
    found = [item for kind, data in events if kind == "evidence" for item in data.get("items", [])]
    w.check(bool(found), f"{route}: B's search found nothing at all (the probe is void): {[k for k, _ in events]}")
    w.check(not w.leaks(resp.text) and "Sable Hold" not in resp.text, f"{route}: B's search sees A's passages")


async def probe_completions(w: World, route: Route) -> None:
    def call(t: str) -> Awaitable[httpx.Response]:
        body = {"model": "waypoint-agent", "messages": [{"role": "user", "content": "and?"}], "thread_id": t}
        return w.c.post("/v1/chat/completions", json=body, headers=B)

    await same_as_missing(w, route, call, w.thread_id, new_id("th_"))


Probe = Callable[[World, Route], Awaitable[None]]
PROBES: dict[Route, Probe] = {
    ("GET", "/openapi.json"): probe_public,
    ("GET", "/docs"): probe_public,
    ("GET", "/docs/oauth2-redirect"): probe_public,
    ("GET", "/redoc"): probe_public,
    ("GET", "/healthz"): probe_public,
    ("GET", "/readyz"): probe_public,
    ("GET", "/ui"): probe_public,
    ("GET", "/ui/"): probe_public,
    ("GET", "/ui/{name}"): probe_public,
    ("GET", "/metrics"): probe_shared,
    ("GET", "/v1/models"): probe_shared,
    ("GET", "/v1/agent/graph"): probe_shared,
    ("GET", "/v1/runs/{run_id}"): by_id("GET", "/v1/runs/{}", "run_id", "run_"),
    ("GET", "/v1/runs/{run_id}/events"): by_id("GET", "/v1/runs/{}/events", "run_id", "run_"),
    ("GET", "/v1/runs/{run_id}/spans"): by_id("GET", "/v1/runs/{}/spans", "run_id", "run_"),
    ("GET", "/v1/threads/{thread_id}"): by_id("GET", "/v1/threads/{}", "thread_id", "th_"),
    ("GET", "/v1/jobs/{job_id}"): by_id("GET", "/v1/jobs/{}", "job_id", "job_"),
    ("POST", "/v1/runs/{run_id}/cancel"): probe_cancel,
    ("DELETE", "/v1/documents/{doc_id}"): probe_delete_document,
    ("GET", "/v1/documents"): probe_list_documents,
    ("GET", "/v1/runs"): probe_list_runs,
    ("POST", "/v1/documents"): probe_upload,
    ("POST", "/v1/chat"): probe_chat,
    ("POST", "/v1/chat/completions"): probe_completions,
}
ORDER = [("POST", "/v1/documents"), ("POST", "/v1/chat")]
"""Probes that set up B's own things run first (B's list then has something to show)."""


@pytest.fixture(scope="module")
def stub() -> Iterator[StubLLM]:
    with stub_llm() as server:
        yield server


@pytest.fixture
def keyed(api_settings: Settings, tmp_path: Path) -> Settings:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-a": "alpha", "key-b": "beta"}))
    return api_settings.model_copy(update={"api": api_settings.api.model_copy(update={"api_keys_file": keys})})


def test_every_route_is_classified(keyed: Settings) -> None:
    app = real_app(keyed, OpenAICompatibleLLM("http://127.0.0.1:9/v1", model="stub"))
    routes = app_routes(app)
    assert routes - set(PROBES) == set(), "routes without a tenant-isolation probe: add one to PROBES"
    assert set(PROBES) - routes == set(), "probes for routes the app no longer has"


async def _cached(c: httpx.AsyncClient, question: str, headers: dict[str, str]) -> int:
    resp = await c.post("/v1/chat", json={"message": question}, headers=headers)
    usage = [json.loads(m["data"]) for m in parse_sse(resp.text) if m.get("event") == "usage"]
    assert usage, resp.text
    return int(usage[0]["cached_tokens"])


async def test_tenant_b_can_reach_nothing_of_tenant_a_on_any_route(keyed: Settings, stub: StubLLM) -> None:
    stub.control(reset=True, rules=RULES, default="The answer.", faults=[])
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0)
    app = real_app(keyed, llm)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=60) as c:
        w = World(c=c, stub=stub)
        up = await c.post("/v1/documents", files=[("files", (A_DOC[0], A_DOC[1], "text/markdown"))], headers=A)
        w.job_id = up.json()["id"]
        assert (await wait_job(c, w.job_id, A))["status"] == "done"
        w.doc_id = (await c.get("/v1/documents", headers=A)).json()["documents"][0]["id"]
        first = await c.post("/v1/chat", json={"message": A_QUESTION}, headers=A)
        w.run_id, w.thread_id = first.headers["x-run-id"], first.headers["x-thread-id"]
        w.secrets = [A_QUESTION, "Sable Hold", w.run_id, w.thread_id, w.doc_id, w.job_id]

        # A's live run (the stub stalls its answer) for the cancel and replay probes
        await asyncio.to_thread(stub.control, faults=STALL)
        async with c.stream("POST", "/v1/chat", json={"message": SLOW_QUESTION}, headers=A) as live:
            w.live_run_id = live.headers["x-run-id"]
            w.secrets += [SLOW_QUESTION, w.live_run_id]
            lines = live.aiter_lines()  # kept: a dropped line iterator would close the stream (a disconnect)
            async for line in lines:
                if line == "event: token":
                    break
            for route in sorted(PROBES, key=lambda r: ORDER.index(r) if r in ORDER else len(ORDER)):
                w.probed.add(route)
                await PROBES[route](w, route)
            cancel = await c.post(f"/v1/runs/{w.live_run_id}/cancel", headers=A)
            w.check(cancel.status_code == 202, f"A could not cancel its own live run: {cancel.text}")
        for path in (f"/v1/runs/{w.run_id}", f"/v1/threads/{w.thread_id}", f"/v1/jobs/{w.job_id}"):
            w.check((await c.get(path, headers=A)).status_code == 200, f"A lost its own {path}")
        w.check(w.doc_id in {d["id"] for d in (await c.get("/v1/documents", headers=A)).json()["documents"]}, "A's doc")
        # the prefix cache: B probes A's exact question; it must look like any fresh question
        await _cached(c, "Hello?", B)  # B's own prompts are warm, like a busy tenant's
        again_a = await _cached(c, A_QUESTION, A)
        fresh_b = await _cached(c, FRESH_QUESTION, B)
        probe_b = await _cached(c, A_QUESTION, B)
        assert again_a > probe_b, "the probe is void: A does not even reuse its own cached question"
        assert probe_b == fresh_b, f"B's probe of A's question: {probe_b} cached tokens; a fresh question: {fresh_b}"

    await llm.aclose()
    assert w.probed == set(PROBES)
    assert w.failures == [], "\n".join(w.failures)
