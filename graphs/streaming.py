"""Turn a producer of run events into ordered envelopes, with cancellation and a hard time limit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agents.llm.errors import LLMError, LLMOutputError, LLMRequestError, LLMTimeoutError, LLMUnavailableError
from graphs.events import Done, Envelope, RunError, run_event_adapter

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
    """A stable, detail-free message for a run failure."""
    for kind, message in _PUBLIC.items():
        if isinstance(exc, kind):
            return message
    return "the language model backend failed" if isinstance(exc, LLMError) else "internal error in the agent"


Emit = Callable[[Any], None]
Producer = Callable[[Emit], Awaitable[Done]]
"""Runs a run, emitting events through ``emit``, and returns its ``done`` event."""

_END = object()


async def drive(run_id: str, producer: Producer, *, limit_s: float) -> AsyncIterator[Envelope]:
    """Yield the producer's events as envelopes (seq from 1); always end with ``done``; never raise.

    The producer runs as a task: when the consumer stops iterating or is cancelled, the task is
    cancelled, which closes any in-flight LLM stream.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def main() -> None:
        try:
            async with asyncio.timeout(limit_s):
                done = await producer(queue.put_nowait)
        except TimeoutError:
            queue.put_nowait(
                RunError(
                    message=f"run exceeded its hard limit of {limit_s:.0f}s", error_type="Timeout", recoverable=False
                )
            )
            done = Done(status="budget")
        except Exception as exc:  # a run failure is reported, never raised to the consumer
            log.warning("run %s failed: %r", run_id, exc, exc_info=not isinstance(exc, LLMError))
            queue.put_nowait(RunError(message=public_message(exc), error_type=type(exc).__name__, recoverable=False))
            done = Done(status="error")
        queue.put_nowait(done)
        queue.put_nowait(_END)

    task = asyncio.create_task(main())
    seq = 0
    try:
        while (item := await queue.get()) is not _END:
            seq += 1
            event = item if not isinstance(item, dict) else run_event_adapter.validate_python(item)
            yield Envelope(run_id=run_id, seq=seq, ts=time.time(), event=event)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
