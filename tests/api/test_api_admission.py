"""Admission control on the whole path (uvicorn, SSE, real runner, real LLM client) against a slow stub LLM server.

N runs at once, M more waiting: of N+M+K concurrent chats the K past the queue get 429 quickly with
``Retry-After``, nothing else errors, and every admitted run finishes with its answer.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from apitest_support import parse_sse, serve
from support.llm_process import StubLLM, stub_llm
from test_api_real_stack import real_app

from agents.llm import OpenAICompatibleLLM
from agents.llm.model_files import resolve_model_file
from api.app import create_app
from knowledge.settings import Settings

pytestmark = pytest.mark.integration

ANSWER = "Mara Quen built the Harrow Point lighthouse in 1871, after the great gale of 1869 wrecked the old light."
FINAL = ANSWER.rstrip(".")
"""The run's final answer (the answerer's closing full stop is dropped)."""
RULES = [{"match": {"schema_property": "needs_retrieval"}, "reply": '{"needs_retrieval": false, "subquestions": []}'}]
RUNS, QUEUED, EXTRA = 2, 2, 4
MODELS_DIR = Path(__file__).resolve().parents[2] / ".waypoint" / "models"
"""Where tests keep assembled GGUF files (as in tests/conftest.py)."""
TEST_MODEL = "qwen2.5-0.5b"


@pytest.fixture(scope="module")
def stub() -> Iterator[StubLLM]:
    with stub_llm() as server:
        yield server


def _limited(settings: Settings, **api: object) -> Settings:
    return settings.model_copy(update={"api": settings.api.model_copy(update=api)})


async def _chat(c: httpx.AsyncClient, i: int) -> tuple[str, httpx.Response, float]:
    started = time.monotonic()
    if i % 2:
        body = {"model": "waypoint-agent", "messages": [{"role": "user", "content": "Who built the lighthouse?"}]}
        resp = await c.post("/v1/chat/completions", json=body)
        return "completions", resp, time.monotonic() - started
    resp = await c.post("/v1/chat", json={"message": "Who built the lighthouse?"})
    return "chat", resp, time.monotonic() - started


def _chat_status(resp: httpx.Response) -> str:
    msgs = [m for m in parse_sse(resp.text) if "event" in m]
    assert msgs and msgs[-1]["event"] == "done", [m["event"] for m in msgs]
    assert not [m for m in msgs if m["event"] == "error"], resp.text
    answers = [json.loads(m["data"])["text"] for m in msgs if m["event"] == "answer"]
    assert answers == [FINAL], answers
    return str(json.loads(msgs[-1]["data"])["status"])


async def test_overflow_gets_429_with_retry_after_at_once_and_every_admitted_run_finishes(
    api_settings: Settings, stub: StubLLM
) -> None:
    stub.control(reset=True, rules=RULES, default=ANSWER, faults=[], token_delay_s=0.06)  # ~1.5 s per answer
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0, timeout_s=60)
    app = real_app(_limited(api_settings, max_concurrent_runs=RUNS, max_queued_runs=QUEUED), llm)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=60) as c:
        results = await asyncio.gather(*(_chat(c, i) for i in range(RUNS + QUEUED + EXTRA)))
        refused = [(kind, r, s) for kind, r, s in results if r.status_code == 429]
        served = [(kind, r, s) for kind, r, s in results if r.status_code != 429]
        assert len(refused) == EXTRA, [(k, r.status_code) for k, r, _ in results]
        for kind, resp, seconds in refused:
            assert seconds < 1.0, f"a refused {kind} request took {seconds:.2f} s"
            assert int(resp.headers["retry-after"]) >= 1
            assert resp.json()["error"]["type"] == "overloaded"
        assert {kind for kind, _, _ in refused} <= {"chat", "completions"}
        for kind, resp, _ in served:
            assert resp.status_code == 200, resp.text
            if kind == "chat":
                assert _chat_status(resp) == "ok"
            else:
                body = resp.json()
                assert body["choices"][0]["message"]["content"] == FINAL
                assert body["choices"][0]["finish_reason"] == "stop"
        answers = [r for r in stub.log() if not r["schema"]]
        assert len(answers) == RUNS + QUEUED, "a refused request reached the LLM"
        metrics = (await c.get("/metrics")).text
        assert 'waypoint_admission_total{outcome="rejected_full"} 4.0' in metrics, metrics
        assert 'waypoint_admission_total{outcome="queued"} 2.0' in metrics
        assert "waypoint_admission_running 0.0" in metrics
        runs = (await c.get("/v1/runs", params={"limit": 50})).json()["runs"]
        assert len(runs) == RUNS + QUEUED and {r["status"] for r in runs} == {"ok"}, "refused requests made no run"
        again = await c.post("/v1/chat", json={"message": "Who built the lighthouse?"})
        assert again.status_code == 200 and _chat_status(again) == "ok", "the slots were all given back"
    await llm.aclose()


async def test_a_client_that_leaves_mid_run_gives_its_slot_back(api_settings: Settings, stub: StubLLM) -> None:
    stub.control(reset=True, rules=RULES, default=" ".join(["word"] * 500), faults=[], token_delay_s=0.01)
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0, timeout_s=60)
    app = real_app(_limited(api_settings, max_concurrent_runs=1, max_queued_runs=0), llm)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=30) as c:
        for _ in range(3):
            async with c.stream("POST", "/v1/chat", json={"message": "Talk at length."}) as resp:
                assert resp.status_code == 200
                async for line in resp.aiter_lines():
                    if line.startswith("event: token"):
                        break
            for _ in range(200):
                if app.state.wp.admission.running == 0:
                    break
                await asyncio.sleep(0.01)
            assert app.state.wp.admission.running == 0, "a disconnected run kept its slot"
    await llm.aclose()


@pytest.mark.slow  # the real embedded llama.cpp (0.5B) behind the default wiring: model load and real runs
async def test_with_the_embedded_model_runs_are_limited_to_its_slots_and_the_overflow_gets_429(
    api_settings: Settings,
) -> None:
    model = resolve_model_file(TEST_MODEL, MODELS_DIR)
    local = api_settings.local.model_copy(update={"model": str(model), "n_parallel": 1, "n_ctx": 4096})
    api = api_settings.api.model_copy(update={"max_queued_runs": 0})  # the run limit is left to its default
    app = create_app(api_settings.model_copy(update={"local": local, "api": api}))  # the default wiring
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=600) as c:
        assert app.state.wp.admission.limit == 1, "the default limit is the embedded server's one slot"
        results = await asyncio.gather(*(_chat(c, 2 * i) for i in range(3)))
        refused = [(r, s) for _, r, s in results if r.status_code == 429]
        served = [r for _, r, _ in results if r.status_code != 429]
        assert len(refused) == 2 and len(served) == 1, [r.status_code for _, r, _ in results]
        for resp, seconds in refused:
            assert seconds < 2.0 and int(resp.headers["retry-after"]) >= 1
        msgs = [m for m in parse_sse(served[0].text) if "event" in m]
        assert served[0].status_code == 200 and msgs[-1]["event"] == "done", [m["event"] for m in msgs]
