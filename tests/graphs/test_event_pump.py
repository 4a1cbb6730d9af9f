"""The one event pump (graphs.streaming.pump) and the run contract checked once (RunRequest.checked)."""

from __future__ import annotations

import asyncio
import contextlib

import anyio
import pytest

from graphs.runner import RunRequest, UnknownToolError, checked_tools
from graphs.streaming import Emit, Stopped, pump
from knowledge.errors import BadInputError


async def test_pump_yields_in_order_then_raises_the_feeds_failure() -> None:
    async def feed(emit: Emit) -> None:
        for i in range(3):
            emit(i)
            await asyncio.sleep(0)
        raise RuntimeError("boom")

    seen: list[object] = []
    with pytest.raises(RuntimeError, match="boom"):
        async for item in pump(feed):
            seen.append(item)
    assert seen == [0, 1, 2]


async def test_a_stop_signal_ends_the_stream_and_cancels_the_feed() -> None:
    stop, cancelled = anyio.Event(), asyncio.Event()

    async def feed(emit: Emit) -> None:
        emit("first")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    items = pump(feed, stops={"stop": stop, "other": anyio.Event()}, close_timeout_s=2.0)
    got = [await anext(items)]
    stop.set()
    got += [item async for item in items]
    assert got == ["first", Stopped("stop")]
    assert cancelled.is_set()


async def test_leaving_early_cancels_the_feed() -> None:
    cancelled = asyncio.Event()

    async def feed(emit: Emit) -> None:
        emit("only")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async with contextlib.aclosing(pump(feed)) as items:
        assert await anext(items) == "only"
    assert cancelled.is_set()


def test_checked_names_the_unknown_tools_and_drops_repeats() -> None:
    with pytest.raises(UnknownToolError, match="web_search") as info:
        RunRequest.checked(["vector_search"], question="q", tools=["vector_search", "web_search"])
    assert isinstance(info.value, BadInputError)
    ok = RunRequest.checked(["vector_search"], question="q", tools=["vector_search", "vector_search"])
    assert ok.tools == ["vector_search"]
    assert RunRequest.checked(None, question="q", tools=["anything"]).tools == ["anything"]
    assert checked_tools(None, ["vector_search"]) is None
