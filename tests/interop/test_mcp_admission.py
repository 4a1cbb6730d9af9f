"""MCP ``ask`` goes through the same admission control as HTTP runs: the limits of ``api.*`` (else the LLM
backend's slots), a full server refuses with the retry hint, and the slot comes back when the ask ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from interop_support import j
from test_mcp_http import client, data, error_text, mcp_http

from agents.llm import CallOptions, Message, ScriptedLLM, StreamEvent
from knowledge.settings import Settings


class GatedLLM(ScriptedLLM):
    """A scripted LLM whose calls wait for ``gate``: the first ask holds its run slot as long as a test likes."""

    def __init__(self, replies: Sequence[Any]) -> None:
        super().__init__(replies)
        self.gate = asyncio.Event()
        self.waiting = 0

    async def stream(
        self, messages: Sequence[Message], *, options: CallOptions | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.waiting += 1
        await self.gate.wait()
        async for event in super().stream(messages, options=options):
            yield event


def _limited(settings: Settings, **limits: Any) -> Settings:
    return settings.model_copy(update={"api": settings.api.model_copy(update=limits)})


def _rejected(state: Any) -> float:
    samples = state.metrics.admission.labels(outcome="rejected_full")
    return float(samples._value.get())


async def test_a_second_ask_past_the_run_limit_is_refused_and_the_slot_comes_back(settings: Settings) -> None:
    replies = [j(needs_retrieval=False, subquestions=[]), "Held answer."] * 2
    llm = GatedLLM(replies)
    limited = _limited(settings, max_concurrent_runs=1, max_queued_runs=0)
    async with mcp_http(limited, llm=llm) as (url, state, _), client(url) as first, client(url) as second:
        assert (state.admission.limit, state.admission.queue) == (1, 0)
        held = asyncio.create_task(first.call_tool("ask", {"question": "Who built the lighthouse?"}))
        for _ in range(500):
            if llm.waiting and state.admission.running == 1:
                break
            await asyncio.sleep(0.01)
        assert state.admission.running == 1, "the first ask never took its run slot"
        before = _rejected(state)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        refused = error_text(await second.call_tool("ask", {"question": "And the ford?"}))
        assert loop.time() - t0 < 2.0, "a full server refuses at once, it does not make the caller wait"
        assert "server busy" in refused and "retry after" in refused, refused
        assert _rejected(state) == before + 1
        assert len(state.store.list_runs(tenant=state.keyring.default_tenant)) == 1, "a refused ask stores no run"
        llm.gate.set()
        done = data(await held)
        assert done["status"] == "ok" and done["answer"].startswith("Held answer"), done
        for _ in range(200):
            if state.admission.running == 0:
                break
            await asyncio.sleep(0.01)
        assert state.admission.running == 0, "the ended ask did not give its slot back"
        again = data(await second.call_tool("ask", {"question": "And the ford?"}))
        assert again["status"] == "ok"


async def test_by_default_mcp_takes_the_limits_of_the_http_api(settings: Settings) -> None:
    llm = GatedLLM([])
    async with mcp_http(_limited(settings, max_concurrent_runs=3, max_queued_runs=2), llm=llm) as (_, state, _):
        assert (state.admission.limit, state.admission.queue, state.admission.wait_s) == (
            3,
            2,
            settings.api.admission_wait_s,
        )
