"""The whole path (uvicorn, SSE, real runner, real LLM client) against a stub LLM server behind a fault proxy."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from apitest_support import parse_sse, serve
from support.fault_proxy import FaultProxy
from support.llm_process import StubLLM, stub_llm
from test_api_real_stack import real_app

from agents.llm import OpenAICompatibleLLM
from knowledge.settings import Settings

ANSWER = "Mara Quen built the Harrow Point lighthouse in 1871, after the great gale of 1869 wrecked the old light."
RULES = [{"match": {"schema_property": "needs_retrieval"}, "reply": '{"needs_retrieval": false, "subquestions": []}'}]


@pytest.fixture(scope="module")
def stub() -> Iterator[StubLLM]:
    with stub_llm() as server:
        yield server


@pytest.fixture
async def proxy(stub: StubLLM) -> AsyncIterator[FaultProxy]:
    stub.control(reset=True, rules=RULES, default=ANSWER, faults=[], token_delay_s=0.0)
    async with FaultProxy(stub.port) as p:
        yield p


async def _events(resp: httpx.Response) -> AsyncIterator[tuple[str, dict[str, object]]]:
    event = ""
    async for line in resp.aiter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event:
            yield event, json.loads(line[6:])


async def test_llm_cut_mid_answer_gives_an_error_event_within_2s_no_duplicates_and_the_next_run_works(
    api_settings: Settings, stub: StubLLM, proxy: FaultProxy
) -> None:
    stub.control(faults=[{"match": {"no_schema": True}, "mode": "stall", "after_tokens": 3}])
    llm = OpenAICompatibleLLM(f"{proxy.url}/v1", model="stub", backoff_s=0.0, max_retries=3, timeout_s=60)
    app = real_app(api_settings, llm)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=30) as c:
        tokens: list[str] = []
        seen: list[str] = []
        cut_at = error_at = 0.0
        async with c.stream("POST", "/v1/chat", json={"message": "Who built the lighthouse?"}) as resp:
            async for kind, data in _events(resp):
                seen.append(kind)
                if kind == "token":
                    tokens.append(str(data["text"]))
                    if len(tokens) == 3:
                        cut_at = time.monotonic()
                        assert proxy.cut() >= 1
                elif kind == "error" and not error_at:
                    error_at = time.monotonic()
                    assert "stub" not in str(data["message"]) and "127.0.0.1" not in str(data["message"])
        assert "".join(tokens) == "Mara Quen built", tokens
        assert cut_at and error_at and error_at - cut_at < 2.0, seen
        assert seen[-1] == "done"
        assert [r["schema"] for r in stub.log()] == [True, False], "the cut answer call must not be sent again"
        ok = await c.post("/v1/chat", json={"message": "Who built the lighthouse?"})
        msgs = [m for m in parse_sse(ok.text) if "event" in m]
        done = json.loads(msgs[-1]["data"])
        assert done["status"] == "ok", [m["event"] for m in msgs]
        text = "".join(json.loads(m["data"])["text"] for m in msgs if m["event"] == "token")
        assert text == ANSWER
    await llm.aclose()


async def test_client_disconnect_mid_answer_stops_the_backend_generation_within_1s(
    api_settings: Settings, stub: StubLLM, proxy: FaultProxy
) -> None:
    stub.control(default=" ".join(["word"] * 2000), token_delay_s=0.005)
    llm = OpenAICompatibleLLM(f"{proxy.url}/v1", model="stub", backoff_s=0.0, timeout_s=60)
    app = real_app(api_settings, llm)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=30) as c:
        async with c.stream("POST", "/v1/chat", json={"message": "Talk at length."}) as resp:
            async for kind, _ in _events(resp):
                if kind == "token":
                    break
            run_id = resp.headers["x-run-id"]
        left_at = time.time()
        for _ in range(200):
            answer = stub.log()[-1]
            if "aborted" in answer:
                break
            await asyncio.sleep(0.01)
        assert "aborted" in answer, "the LLM server kept generating for a client that left"
        assert answer["aborted"] - left_at < 1.0
        run = (await c.get(f"/v1/runs/{run_id}")).json()
        assert run["status"] == "cancelled"
    await llm.aclose()


@pytest.mark.slow  # about 100 s on a busy 2-core machine
async def test_a_hundred_disconnects_leave_no_run_task_no_open_stream_and_no_backend_generation(
    api_settings: Settings, stub: StubLLM, proxy: FaultProxy
) -> None:
    stub.control(default=" ".join(["word"] * 2000), token_delay_s=0.002)
    llm = OpenAICompatibleLLM(f"{proxy.url}/v1", model="stub", backoff_s=0.0, timeout_s=60)
    app = real_app(api_settings, llm)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=30) as c:
        baseline = len(asyncio.all_tasks())
        for _ in range(100):
            async with c.stream("POST", "/v1/chat", json={"message": "Talk at length."}) as resp:
                async for kind, _ in _events(resp):
                    if kind == "token":
                        break
        state = app.state.wp
        for _ in range(300):
            answers = [r for r in stub.log() if not r["schema"]]
            pending = [t for t in asyncio.all_tasks() if t.get_name().startswith("run-")]
            if len(state.streams) == 0 and not pending and all("aborted" in r for r in answers):
                break
            await asyncio.sleep(0.02)
        assert len(answers) == 100 and all("aborted" in r for r in answers)
        assert pending == [] and len(state.streams) == 0
        assert len(asyncio.all_tasks()) <= baseline + 2, "tasks leaked"
        runs = (await c.get("/v1/runs", params={"limit": 200})).json()["runs"]
        assert len(runs) == 100 and {r["status"] for r in runs} == {"cancelled"}
    await llm.aclose()
