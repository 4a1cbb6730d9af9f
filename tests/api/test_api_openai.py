"""POST /v1/chat/completions with the official ``openai`` client as the caller."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import openai
import pytest
from apitest_support import ScriptedRun, answer_script

from graphs.events import Done, RunError, RunStarted


@pytest.fixture
async def oai(live: str) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=f"{live}/v1", api_key="unused", max_retries=0)
    yield client
    await client.close()


async def test_non_streaming_answer_with_citations_and_run_id(oai: openai.AsyncOpenAI, live: str) -> None:
    resp = await oai.chat.completions.create(
        model="waypoint-agent",
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "Capital of France?"}],
    )
    assert resp.model == "waypoint-agent"
    assert resp.choices[0].message.content == "Paris is the capital [e1]."
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage is not None and resp.usage.prompt_tokens == 30 and resp.usage.completion_tokens == 6
    extra = resp.model_extra or {}
    assert extra["waypoint"]["citations"][0]["id"] == "e1"
    run_id = extra["waypoint"]["run_id"]
    async with httpx.AsyncClient(base_url=live) as c:
        assert (await c.get(f"/v1/runs/{run_id}")).json()["status"] == "ok"


async def test_streaming_deltas_join_to_the_answer(oai: openai.AsyncOpenAI, run_fn: ScriptedRun) -> None:
    stream = await oai.chat.completions.create(
        model="waypoint-agent", messages=[{"role": "user", "content": "Capital of France?"}], stream=True
    )
    text, last = "", None
    async for chunk in stream:
        text += chunk.choices[0].delta.content or ""
        last = chunk
    assert text == "Paris is the capital [e1]."
    assert last is not None and last.choices[0].finish_reason == "stop"
    assert (last.model_extra or {})["waypoint"]["status"] == "ok"
    assert run_fn.specs[-1].question == "Capital of France?"


async def test_unknown_model_is_a_clear_404(oai: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as err:
        await oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert "waypoint-agent" in str(err.value)


async def test_no_user_message_is_a_4xx(oai: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.UnprocessableEntityError):
        await oai.chat.completions.create(model="waypoint-agent", messages=[{"role": "system", "content": "x"}])


async def test_backend_failure_is_a_502_and_the_next_call_works(oai: openai.AsyncOpenAI, run_fn: ScriptedRun) -> None:
    run_fn.script = [RunStarted(question="q"), RunError(message="llm down", recoverable=False), Done(status="error")]
    with pytest.raises(openai.APIStatusError) as err:
        await oai.chat.completions.create(model="waypoint-agent", messages=[{"role": "user", "content": "q"}])
    assert err.value.status_code == 502 and "llm down" in str(err.value)
    run_fn.script = answer_script()
    ok = await oai.chat.completions.create(model="waypoint-agent", messages=[{"role": "user", "content": "q"}])
    assert ok.choices[0].message.content


async def test_models_lists_the_agent(oai: openai.AsyncOpenAI) -> None:
    models = await oai.models.list()
    assert [m.id for m in models.data] == ["waypoint-agent"]


async def test_non_streaming_client_that_leaves_cancels_the_run(live: str, run_fn: ScriptedRun) -> None:
    run_fn.hang_at = 2
    body = {"model": "waypoint-agent", "messages": [{"role": "user", "content": "q"}]}
    async with httpx.AsyncClient(base_url=live, timeout=httpx.Timeout(10, read=0.5)) as c:
        with pytest.raises(httpx.ReadTimeout):
            await c.post("/v1/chat/completions", json=body)
        for _ in range(250):
            if run_fn.cancelled:
                break
            await asyncio.sleep(0.02)
        assert len(run_fn.cancelled) == 1
        run = (await c.get(f"/v1/runs/{run_fn.cancelled[0]}")).json()
        assert run["status"] == "cancelled"
