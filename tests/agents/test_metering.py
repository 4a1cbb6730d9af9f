"""LLM calls made inside a block are collected per task, wherever in the call stack they were made."""

from __future__ import annotations

import asyncio

from agents.llm import MeteredLLM, ScriptedLLM, StreamDone, llm_calls
from agents.llm.types import Message

ASK: list[Message] = [{"role": "user", "content": "hello there"}]


async def test_complete_and_stream_are_collected_inside_the_block_only() -> None:
    inner = ScriptedLLM(["one", "two words", "three"])
    llm = MeteredLLM(inner)
    await llm.complete(ASK)  # no block open: nothing to report to, and no error
    with llm_calls() as calls:
        await llm.complete(ASK)
        events = [e async for e in llm.stream(ASK)]
    assert [c.text for c in calls] == ["two words", "three"]
    assert isinstance(events[-1], StreamDone) and events[-1].completion is calls[1]
    assert calls[0].usage.prompt_tokens == 2 and calls[0].usage.completion_tokens == 2
    assert llm.model_name == "scripted" and await llm.health()


async def test_the_innermost_block_gets_the_calls() -> None:
    llm = MeteredLLM(ScriptedLLM(["a", "b"]))
    with llm_calls() as outer:
        await llm.complete(ASK)
        with llm_calls() as inner:
            await llm.complete(ASK)
    assert [c.text for c in outer] == ["a"] and [c.text for c in inner] == ["b"]


async def test_concurrent_tasks_each_see_their_own_calls() -> None:
    llm = MeteredLLM(ScriptedLLM(["x", "y", "z"], delay_s=0.01))

    async def work(n: int) -> list[str]:
        with llm_calls() as calls:
            for _ in range(n):
                await llm.complete(ASK)
        return [c.text for c in calls]

    one, two = await asyncio.gather(work(1), work(2))
    assert len(one) == 1 and len(two) == 2
    assert sorted(one + two) == ["x", "y", "z"]


async def test_calls_of_tasks_started_inside_the_block_are_collected() -> None:
    llm = MeteredLLM(ScriptedLLM(["p", "q"]))
    with llm_calls() as calls:
        await asyncio.gather(llm.complete(ASK), llm.complete(ASK))
    assert sorted(c.text for c in calls) == ["p", "q"]
