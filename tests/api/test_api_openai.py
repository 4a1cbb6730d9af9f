"""POST /v1/chat/completions with the official ``openai`` client as the caller."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import openai
import pytest
from apitest_support import ScriptedRun, answer_script, parse_sse

from graphs.events import Answer, Citation, Done, RunError, RunStarted, Token


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
        run = (await c.get(f"/v1/runs/{run_fn.cancelled[0]}", timeout=10)).json()  # not the 0.5 s read bound
        assert run["status"] == "cancelled"


def _draft_then_final() -> list[object]:
    """The answerer streams a draft the run then replaces (verifier fallback): the answer event is the truth."""
    return [
        RunStarted(question="q"),
        Token(text="[Ada"),
        Token(text=" Venn,"),
        Token(text=" E1]"),
        Answer(text="Mara Quen", citations=[Citation(id="E2", doc_id="d2", title="Lighthouse")]),
        Done(status="ok"),
    ]


async def test_non_streaming_content_is_the_final_answer_not_the_draft_tokens(
    oai: openai.AsyncOpenAI, run_fn: ScriptedRun
) -> None:
    run_fn.script = _draft_then_final()  # type: ignore[assignment]
    resp = await oai.chat.completions.create(model="waypoint-agent", messages=[{"role": "user", "content": "q"}])
    assert resp.choices[0].message.content == "Mara Quen" and resp.choices[0].finish_reason == "stop"


async def test_streamed_deltas_join_to_the_final_answer_not_the_draft(
    oai: openai.AsyncOpenAI, run_fn: ScriptedRun
) -> None:
    run_fn.script = _draft_then_final()  # type: ignore[assignment]
    stream = await oai.chat.completions.create(
        model="waypoint-agent", messages=[{"role": "user", "content": "q"}], stream=True
    )
    text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
    assert text == "Mara Quen"


async def test_a_failed_streaming_run_is_an_error_not_stop(live: str, run_fn: ScriptedRun) -> None:
    run_fn.script = [
        RunStarted(question="q"),
        Token(text="half an ans"),
        RunError(message="the LLM backend is unavailable", error_type="LLMUnavailableError", recoverable=False),
        Done(status="error"),
    ]
    body = {"model": "waypoint-agent", "messages": [{"role": "user", "content": "q"}], "stream": True}
    async with httpx.AsyncClient(base_url=live) as c:
        resp = await c.post("/v1/chat/completions", json=body)
    datas = [json.loads(m["data"]) for m in parse_sse(resp.text) if "data" in m and m["data"] != "[DONE]"]
    errors = [d["error"] for d in datas if "error" in d]
    assert len(errors) == 1 and errors[0]["type"] == "backend_error" and errors[0]["code"] == "run_error"
    last = datas[-1]
    assert last["choices"][0]["finish_reason"] == "error" and last["waypoint"]["status"] == "error"
    assert not any(d["choices"][0]["delta"].get("content") for d in datas if "choices" in d)


async def test_the_openai_client_raises_on_a_failed_streaming_run(oai: openai.AsyncOpenAI, run_fn: ScriptedRun) -> None:
    run_fn.script = [RunStarted(question="q"), RunError(message="down", recoverable=False), Done(status="error")]
    stream = await oai.chat.completions.create(
        model="waypoint-agent", messages=[{"role": "user", "content": "q"}], stream=True
    )
    with pytest.raises(openai.APIError, match="status 'error'"):
        async for _ in stream:
            pass


async def test_a_budget_cut_answer_finishes_with_length(oai: openai.AsyncOpenAI, run_fn: ScriptedRun) -> None:
    run_fn.script = [RunStarted(question="q"), Answer(text="partial"), Done(status="budget")]
    resp = await oai.chat.completions.create(model="waypoint-agent", messages=[{"role": "user", "content": "q"}])
    assert resp.choices[0].message.content == "partial" and resp.choices[0].finish_reason == "length"
