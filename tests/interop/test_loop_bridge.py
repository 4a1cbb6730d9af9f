"""``LoopBridge``: async work sent to the loop that owns it, from sync code, other threads and other loops."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator

import pytest
from anyio.from_thread import start_blocking_portal

from tools.loop_bridge import BridgeError, LoopBridge


async def numbers(n: int, log: list[str], *, fail_at: int | None = None) -> AsyncIterator[int]:
    """0..n-1 (raising at ``fail_at``), logging the loop thread it ran on and when it was closed."""
    log.append(threading.current_thread().name)
    try:
        for i in range(n):
            if i == fail_at:
                raise ValueError(f"failed at {i}")
            await asyncio.sleep(0)
            yield i
    finally:
        log.append("closed")


async def thread_name() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


@pytest.fixture
def owner() -> Iterator[LoopBridge]:
    """A bridge to a loop running in a background thread (as ``langchain_kit`` sets up)."""
    with start_blocking_portal() as portal:
        yield LoopBridge(portal.call(asyncio.get_running_loop))


def test_sync_calls_run_on_the_owner_loop(owner: LoopBridge) -> None:
    assert owner.run(thread_name) != threading.current_thread().name
    log: list[str] = []
    assert list(owner.iterate(lambda: numbers(3, log))) == [0, 1, 2]
    assert log[0] != threading.current_thread().name and log[-1] == "closed"


def test_errors_come_through_and_leaving_early_closes_the_source(owner: LoopBridge) -> None:
    log: list[str] = []
    with pytest.raises(ValueError, match="failed at 2"):
        list(owner.iterate(lambda: numbers(5, log, fail_at=2)))
    assert log[-1] == "closed"
    log.clear()
    for i in owner.iterate(lambda: numbers(1000, log)):
        if i == 2:
            break
    assert log[-1] == "closed"


async def test_async_calls_from_another_loop(owner: LoopBridge) -> None:
    here = threading.current_thread().name
    assert await owner.arun(thread_name) != here
    log: list[str] = []
    assert [i async for i in owner.aiterate(lambda: numbers(3, log))] == [0, 1, 2]
    assert log[0] != here and log[-1] == "closed"
    log.clear()
    stream = owner.aiterate(lambda: numbers(1000, log))
    assert await anext(stream) == 0
    await stream.aclose()  # type: ignore[attr-defined]
    for _ in range(100):
        if log[-1:] == ["closed"]:
            break
        await asyncio.sleep(0.01)
    assert log[-1] == "closed"


async def test_on_the_owner_loop_async_is_direct_and_sync_is_refused() -> None:
    bridge = LoopBridge.here()
    assert await bridge.arun(thread_name) == threading.current_thread().name
    log: list[str] = []
    assert [i async for i in bridge.aiterate(lambda: numbers(2, log))] == [0, 1]
    with pytest.raises(BridgeError, match="async method"):
        bridge.run(thread_name)
    with pytest.raises(BridgeError, match="async method"):
        next(iter(bridge.iterate(lambda: numbers(2, log))))


def test_without_an_owner_sync_calls_get_their_own_loop() -> None:
    bridge = LoopBridge()
    assert bridge.run(thread_name) == threading.current_thread().name  # asyncio.run in this thread
    log: list[str] = []
    assert list(bridge.iterate(lambda: numbers(3, log))) == [0, 1, 2]
    assert log[-1] == "closed"


def test_a_stopped_owner_loop_is_a_clear_error() -> None:
    with start_blocking_portal() as portal:
        bridge = LoopBridge(portal.call(asyncio.get_running_loop))
    with pytest.raises(BridgeError, match="no longer running"):
        bridge.run(thread_name)
