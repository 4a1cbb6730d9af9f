"""Run async work on the event loop that owns the services it touches, from sync code or from another loop.

LangChain calls ``invoke`` (sync) as readily as ``ainvoke``; Waypoint's tools and agent are async and hold
loop-bound clients (the graph store's connections, the checkpointer). A ``LoopBridge`` remembers the loop
the services were opened on and sends each call there: awaited directly on that loop, handed over with
``run_coroutine_threadsafe`` from any other thread or loop. Without an owner loop, sync calls get a fresh
``asyncio.run``: fine for services that hold nothing loop-bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class BridgeError(RuntimeError):
    """A call that cannot be bridged: sync code inside the owner loop (it would block it), or the loop is gone."""


_END = object()
_CLEANUP_S = 5.0
"""How long an abandoned iteration may take to clean up before the caller moves on."""


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class LoopBridge:
    """Sends coroutines and async iterators to the loop that owns the services (``None``: no owner)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop

    @classmethod
    def here(cls) -> LoopBridge:
        """A bridge to the loop running now (None when called outside one)."""
        return cls(_running_loop())

    def _owner(self) -> asyncio.AbstractEventLoop | None:
        loop = self.loop
        if loop is not None and (loop.is_closed() or not loop.is_running()):
            raise BridgeError("the event loop these services were opened on is no longer running")
        return loop

    def run(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``factory()`` to completion from sync code and return its result."""
        owner, current = self._owner(), _running_loop()
        if owner is not None and owner is current:
            raise BridgeError("sync call inside the event loop that owns these services; use the async method")
        if owner is None:
            if current is not None:
                raise BridgeError("sync call inside a running event loop; use the async method")
            return asyncio.run(factory())
        return asyncio.run_coroutine_threadsafe(factory(), owner).result()

    async def arun(self, factory: Callable[[], Awaitable[T]]) -> T:
        """Await ``factory()`` on the owner loop (directly when that is the loop running now)."""
        owner, current = self._owner(), asyncio.get_running_loop()
        if owner is None or owner is current:
            return await factory()

        async def call() -> T:
            return await factory()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), owner))

    def iterate(self, factory: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        """Iterate ``factory()`` from sync code; leaving early cancels it."""
        owner, current = self._owner(), _running_loop()
        if current is not None and (owner is None or owner is current):
            raise BridgeError("sync iteration inside a running event loop; use the async method")
        if owner is not None:
            yield from _iterate_on(owner, factory)
            return
        with _private_loop() as loop:
            yield from _iterate_on(loop, factory)

    async def aiterate(self, factory: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T]:
        """Iterate ``factory()`` from async code on any loop; leaving early cancels it."""
        owner, current = self._owner(), asyncio.get_running_loop()
        if owner is None or owner is current:
            source = factory()
            try:
                async for item in source:
                    yield item
            finally:
                await _close(source)
            return
        items: asyncio.Queue[object] = asyncio.Queue()

        def put(item: object) -> None:
            current.call_soon_threadsafe(items.put_nowait, item)

        future = asyncio.run_coroutine_threadsafe(_pump(factory, put), owner)
        try:
            while (got := await items.get()) is not _END:
                if isinstance(got, BaseException):
                    raise got
                yield got  # type: ignore[misc]
        finally:
            future.cancel()


async def _pump(factory: Callable[[], AsyncIterator[T]], put: Callable[[object], None]) -> None:
    """Feed every item (then an exception, if one ends it) and the end marker to ``put``."""
    source = factory()
    try:
        async for item in source:
            put(item)
    except Exception as exc:
        put(exc)
    finally:
        try:
            await _close(source)
        finally:
            put(_END)


async def _close(source: AsyncIterator[Any]) -> None:
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        await aclose()


def _iterate_on(loop: asyncio.AbstractEventLoop, factory: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
    """Pump ``factory()`` on ``loop`` (another thread's) into a queue this thread reads."""
    items: queue.Queue[object] = queue.Queue()
    future = asyncio.run_coroutine_threadsafe(_pump(factory, items.put), loop)
    ended = False
    try:
        while (item := items.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
        ended = True
    finally:
        if not ended:
            future.cancel()
            with contextlib.suppress(queue.Empty):  # wait for the pump to finish its cleanup
                while items.get(timeout=_CLEANUP_S) is not _END:
                    pass


@contextlib.contextmanager
def _private_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A fresh event loop running in a helper thread, stopped and closed at the end."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="loop-bridge", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_CLEANUP_S)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
