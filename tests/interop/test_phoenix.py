"""A Waypoint run's trace arrives in Arize Phoenix: OpenInference span kinds, one tree, token counts.

Phoenix (``arize-phoenix``: the ``phoenix`` extra, not in ``dev``; see docs/observability.md) runs as its own process
on loopback with a temp working dir (its SQLite database) and telemetry off. The Waypoint app runs in this process
over the real stores with the scripted LLM, exporting over OTLP/HTTP to Phoenix's ``/v1/traces`` exactly as
``waypoint serve`` does when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; the spans are then read back through Phoenix's
REST API.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from interop_support import free_port, lighthouse_reply, sample_documents, scripted_factory

from agents.llm import ScriptedLLM
from api.app import create_app
from knowledge.settings import OTelConfig, Settings

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("phoenix") is None,
        reason="needs Arize Phoenix: pip install '.[phoenix]' (kept out of dev; docs/observability.md)",
    ),
]

PROJECT = "waypoint-test"
"""The Phoenix project the spans go to (OpenInference's ``openinference.project.name`` resource attribute)."""
QUESTION = "Who built the Harrow Point lighthouse?"


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    """A Phoenix server process on free loopback ports; yields its base URL; stopped (and its dir removed) after."""
    work = tmp_path / "phoenix"
    work.mkdir()
    port, grpc_port = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    env.pop("PHOENIX_COLLECTOR_ENDPOINT", None)
    env.pop("PHOENIX_SQL_DATABASE_URL", None)
    log = (work / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url, proc, work / "server.log")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 240) -> None:
    """Poll ``/healthz`` until Phoenix answers (a cold start takes ~30 s on a loaded 2-core machine)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"phoenix exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"phoenix did not come up in {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")


async def _phoenix_spans(url: str, run_id: str, expected: int, timeout_s: float = 60) -> list[dict[str, Any]]:
    """The run's spans as Phoenix's REST API lists them, once all ``expected`` of them are in (ingest is async)."""
    spans: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(base_url=url, timeout=10) as c:
        while time.monotonic() < deadline:
            res = await c.get(f"/v1/projects/{PROJECT}/spans", params={"limit": 1000})
            if res.status_code == 200:
                data = res.json()["data"]
                spans = [s for s in data if s["attributes"].get("waypoint.run_id") == run_id]
                if len(spans) >= expected:
                    return spans
            await asyncio.sleep(0.5)
    raise AssertionError(f"Phoenix holds {len(spans)} of the run's {expected} spans after {timeout_s:.0f} s")


@pytest.fixture
def otel_settings(settings: Settings, phoenix: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings exporting to Phoenix, as the documented environment says (endpoint + project resource attribute)."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={PROJECT}")
    otel = OTelConfig(exporter_otlp_endpoint=phoenix, service_name="waypoint")
    return settings.model_copy(update={"otel": otel})


async def _ask(settings: Settings, llm: ScriptedLLM) -> tuple[str, dict[str, Any]]:
    """Serve Waypoint, ingest the sample knowledge base, ask; the run id and Waypoint's own trace of the run."""
    app = create_app(settings, deps_factory=scripted_factory(llm))
    async with app.router.lifespan_context(app):
        await app.state.wp.deps.documents.ingest_paths(sample_documents(), tenant=settings.default_tenant)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=60) as client:
            res = await client.post("/v1/chat", json={"message": QUESTION})
            assert res.status_code == 200 and "event: done" in res.text, res.text[-2000:]
            run_id = res.headers["x-run-id"]
            own = (await client.get(f"/v1/runs/{run_id}/spans")).json()
    return run_id, own  # the lifespan's end shut the exporter down, flushing its batch


async def test_a_run_arrives_in_phoenix_with_kinds_tree_and_token_counts(phoenix: str, otel_settings: Settings) -> None:
    llm = ScriptedLLM([lighthouse_reply] * 40)
    run_id, own = await _ask(otel_settings, llm)
    assert own["run"]["status"] == "ok"
    ours = own["trace"]["spans"]
    spans = await _phoenix_spans(phoenix, run_id, expected=len(ours))
    assert len(spans) == len(ours)
    kinds = {s["span_kind"] for s in spans}
    assert {"CHAIN", "LLM", "RETRIEVER"} <= kinds, kinds

    # one trace, one root, every parent present: Phoenix shows the same tree as Waypoint's viewer
    assert len({s["context"]["trace_id"] for s in spans}) == 1
    roots = [s for s in spans if s["parent_id"] is None]
    assert [r["name"] for r in roots] == ["waypoint.run"]
    root = roots[0]
    assert root["span_kind"] == "CHAIN" and root["status_code"] == "OK"
    assert root["attributes"]["input.value"] == QUESTION
    assert "Ada Venn" in root["attributes"]["output.value"]
    ids = {s["context"]["span_id"] for s in spans}
    assert all(s["parent_id"] in ids for s in spans if s is not root)

    # every LLM call is an LLM span with its token counts, matching what Waypoint recorded
    llm_spans = [s for s in spans if s["span_kind"] == "LLM"]
    assert len(llm_spans) == len(llm.calls) > 0
    for s in llm_spans:
        a = s["attributes"]
        assert a["llm.token_count.prompt"] > 0 and a["llm.token_count.completion"] > 0, s["name"]
        assert a["llm.token_count.total"] == a["llm.token_count.prompt"] + a["llm.token_count.completion"]
    recorded = [x["attributes"] for x in ours if x["kind"] == "llm"]
    assert sum(s["attributes"]["llm.token_count.prompt"] for s in llm_spans) == sum(
        int(a["prompt_tokens"]) for a in recorded
    )
    assert sum(s["attributes"]["llm.token_count.completion"] for s in llm_spans) == sum(
        int(a["completion_tokens"]) for a in recorded
    )

    # each search is a RETRIEVER span with its query and the passages it contributed (as Waypoint recorded them)
    retrievers = {s["name"]: s["attributes"] for s in spans if s["span_kind"] == "RETRIEVER"}
    # the first search fuses vector + graph (the sample KB's articles are short: not a section lookup)
    assert {"vector_search", "graph_search"} <= set(retrievers)
    queries = {x["attributes"]["query"] for x in ours if x["kind"] == "tool"}
    assert queries and {a["input.value"] for a in retrievers.values()} == queries  # the queries Waypoint sent
    for x in (x for x in ours if x["kind"] == "tool"):
        docs = [ev["text"] for ev in x["attributes"]["evidence"]]
        got = [retrievers[x["name"]][f"retrieval.documents.{i}.document.content"] for i in range(len(docs))]
        assert got == docs, x["name"]
    assert any("retrieval.documents.0.document.content" in a for a in retrievers.values())
