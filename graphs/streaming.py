"""The one event pump: a producer runs as a task feeding a queue that the consumer reads, with stop signals.

``pump`` is the only queue-and-task pump in the project. ``drive`` (the agent's runs) turns a producer into
ordered envelopes with a hard time limit; the API reads a run through ``pump`` too, so a client leaving, a
shutdown or a cancel request ends the run wherever it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from agents.llm.errors import LLMError, LLMOutputError, LLMRequestError, LLMTimeoutError, LLMUnavailableError
from graphs.events import Done, Envelope, RunError, run_event_adapter
from knowledge.errors import BadInputError

log = logging.getLogger(__name__)

_PUBLIC = {
    LLMUnavailableError: "the language model backend is unavailable or dropped the connection",
    LLMTimeoutError: "the language model backend timed out",
    LLMRequestError: "the language model backend refused the request",
    LLMOutputError: "the language model's output was not valid",
}
"""What a client is told about a run failure, by kind: stable text; the details (addresses, backend messages,
tracebacks) go to the log only."""


def public_message(exc: BaseException) -> str:
    """A stable, detail-free message for a run failure (bad input says what was wrong with it)."""
    for kind, message in _PUBLIC.items():
        if isinstance(exc, kind):
            return message
    if isinstance(exc, BadInputError):
        return str(exc)
    return "the language model backend failed" if isinstance(exc, LLMError) else "internal error in the agent"


Emit = Callable[[Any], None]
Feed = Callable[[Emit], Awaitable[None]]
"""Produces items through ``emit`` until it returns."""
Producer = Callable[[Emit], Awaitable[Done]]
"""Runs a run, emitting events through ``emit``, and returns its ``done`` event."""


@dataclass(frozen=True)
class Stopped:
    """The last item of a pumped stream that a stop signal ended: which one."""

    reason: str


_END = object()


async def _watch(event: anyio.Event, queue: asyncio.Queue[Any], item: Stopped) -> None:
    await event.wait()
    queue.put_nowait(item)


async def pump(
    feed: Feed,
    *,
    stops: Mapping[str, anyio.Event] | None = None,
    name: str | None = None,
    close_timeout_s: float | None = None,
) -> AsyncGenerator[Any, None]:
    """Yield what ``feed`` emits, in order, while it runs as its own task.

    When a stop event is set, yield ``Stopped(its key)`` and end. When ``feed`` raises, its exception is
    raised here after the items it emitted. However the stream ends (the consumer leaving included), the
    feed is cancelled and awaited, shielded, for at most ``close_timeout_s`` (None: until it ends), which
    closes whatever it had in flight (an LLM stream).
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def main() -> None:
        try:
            await feed(queue.put_nowait)
        finally:
            queue.put_nowait(_END)

    task = asyncio.create_task(main(), name=name)
    watchers = [asyncio.create_task(_watch(event, queue, Stopped(key))) for key, event in (stops or {}).items()]
    try:
        while (item := await queue.get()) is not _END:
            yield item
            if isinstance(item, Stopped):
                return
        await task  # the feed ended: raise its failure, if any
    finally:
        await _cancel(task, *watchers, timeout_s=close_timeout_s)


async def _cancel(*tasks: asyncio.Task[None], timeout_s: float | None) -> None:
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    with anyio.CancelScope(shield=True) as scope:
        if timeout_s is not None:
            scope.deadline = anyio.current_time() + timeout_s
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def drive(run_id: str, producer: Producer, *, limit_s: float) -> AsyncIterator[Envelope]:
    """Yield the producer's events as envelopes (seq from 1); always end with ``done``; never raise.

    The producer runs as the pump's task: when the consumer stops iterating or is cancelled, the task is
    cancelled, which closes any in-flight LLM stream.
    """

    async def feed(emit: Emit) -> None:
        try:
            async with asyncio.timeout(limit_s):
                done = await producer(emit)
        except TimeoutError:
            emit(
                RunError(
                    message=f"run exceeded its hard limit of {limit_s:.0f}s", error_type="Timeout", recoverable=False
                )
            )
            done = Done(status="budget")
        except Exception as exc:  # a run failure is reported, never raised to the consumer
            log.warning("run %s failed: %r", run_id, exc, exc_info=not isinstance(exc, LLMError | BadInputError))
            emit(RunError(message=public_message(exc), error_type=type(exc).__name__, recoverable=False))
            done = Done(status="error")
        emit(done)

    seq = 0
    async with contextlib.aclosing(pump(feed)) as items:
        async for item in items:
            seq += 1
            event = item if not isinstance(item, dict) else run_event_adapter.validate_python(item)
            yield Envelope(run_id=run_id, seq=seq, ts=time.time(), event=event)
