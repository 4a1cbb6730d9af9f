"""The start-up prefix warm-up: on by setting, sends the agent's exact system prefix once, never holds up /readyz
and never stops a server whose LLM is down. Real app wiring against the stub LLM server process."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.llm_process import StubLLM, stub_llm
from support.stub_llm import render, tokens
from test_api_real_stack import asgi, real_app

from agents.llm import OpenAICompatibleLLM
from graphs.warmup import WARM_USER
from knowledge.settings import Settings

RULES = [{"match": {"schema_property": "needs_retrieval"}, "reply": '{"needs_retrieval": false, "subquestions": []}'}]


@pytest.fixture(scope="module")
def stub() -> Iterator[StubLLM]:
    with stub_llm() as server:
        yield server


def _warm(settings: Settings, on: bool = True, timeout_s: float = 120.0) -> Settings:
    return settings.model_copy(
        update={"llm": settings.llm.model_copy(update={"warm_prefix": on, "warm_timeout_s": timeout_s})}
    )


async def _log_until(stub: StubLLM, n: int, within_s: float = 10.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + within_s
    while len(log := await asyncio.to_thread(stub.log)) < n and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return log


def _system(record: dict[str, Any]) -> str:
    return str(record["messages"][0]["content"])


async def test_serve_sends_the_agents_system_prefix_once_so_the_first_question_reads_it_cached(
    api_settings: Settings, stub: StubLLM
) -> None:
    stub.control(reset=True, rules=RULES, default="Hello.", faults=[], token_delay_s=0.0)
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0)
    async with asgi(real_app(_warm(api_settings), llm)) as c:
        warm = await _log_until(stub, 1)
        assert len(warm) == 1 and warm[0]["messages"][-1]["content"] == WARM_USER
        resp = await c.post("/v1/chat", json={"message": "Hi there, who are you?"})
        assert resp.status_code == 200, resp.text
    await llm.aclose()
    log = stub.log()
    assert len(log) >= 2 and sum(r["messages"][-1]["content"] == WARM_USER for r in log) == 1
    planner = log[1]
    assert _system(planner) == _system(warm[0])  # the exact prefix the agent's calls start with
    system_tokens = len(tokens(render(planner["messages"][:1])))
    assert planner["usage"]["prompt_tokens_details"]["cached_tokens"] >= system_tokens  # read, not prefilled


async def test_without_the_setting_the_first_question_is_the_first_request(
    api_settings: Settings, stub: StubLLM
) -> None:
    stub.control(reset=True, rules=RULES, default="Hello.", faults=[], token_delay_s=0.0)
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0)
    async with asgi(real_app(_warm(api_settings, on=False), llm)) as c:
        await asyncio.sleep(0.3)
        assert stub.log() == []
        assert (await c.post("/v1/chat", json={"message": "Hi there, who are you?"})).status_code == 200
    await llm.aclose()
    first = stub.log()[0]
    assert first["messages"][-1]["content"] != WARM_USER
    assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0  # the cold prefill warm-up avoids


async def test_a_hanging_warm_up_does_not_hold_up_readyz_or_shutdown(api_settings: Settings, stub: StubLLM) -> None:
    stub.control(
        reset=True,
        rules=RULES,
        default="Hello.",
        faults=[{"match": {"contains": WARM_USER}, "mode": "stall", "after_tokens": 0}],
    )
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0, timeout_s=60)
    started = time.monotonic()
    async with asgi(real_app(_warm(api_settings), llm)) as c:
        await _log_until(stub, 1)  # the warm-up is in flight, stalled
        ready = await c.get("/readyz")
        assert ready.status_code == 200 and ready.json()["checks"]["llm"] is True
    await llm.aclose()
    assert time.monotonic() - started < 15, "start, /readyz and shutdown must not wait for the warm-up"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_llm_that_is_down_only_skips_the_warm_up(
    api_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{_free_port()}/v1", model="stub", backoff_s=0.0, max_retries=0)
    async with asgi(real_app(_warm(api_settings), llm)) as c:
        assert (await c.get("/healthz")).status_code == 200
        for _ in range(100):
            if "prefix warm-up skipped" in caplog.text:
                break
            await asyncio.sleep(0.05)
        ready = await c.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["llm"] is False
    await llm.aclose()
    assert "prefix warm-up skipped" in caplog.text
