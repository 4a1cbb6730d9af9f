"""Drive one run for one client: store every event as it comes, forward it, close out what ends early.

The agent runs in its own task (the pump) feeding a queue; the response generator reads the queue.
When the client goes away the response is cancelled, the generator cancels the pump, and the
cancellation reaches the agent's in-flight LLM stream. On server shutdown the generator stops
waiting, cancels the run and sends a final ``error`` + ``done`` pair.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Literal

import anyio

from api.metrics import Metrics
from graphs.events import Done, Envelope, RunError
from graphs.tracing.run_store import RunStore

log = logging.getLogger(__name__)

_CLOSE_TIMEOUT_S = 2.0
"""How long a cancelled run may take to release its resources before we stop waiting."""


class RunRecorder:
    """Stores and counts a run's events in order; writes the ending the agent could not."""

    def __init__(self, store: RunStore, metrics: Metrics, run_id: str) -> None:
        self.store = store
        self.metrics = metrics
        self.run_id = run_id
        self.last_seq = -1
        self.done: Done | None = None
        self._started = time.monotonic()

    def record(self, envelope: Envelope) -> None:
        """Store one event and update the metrics."""
        self.store.append(envelope)
        self.last_seq = envelope.seq
        self.metrics.observe_event(envelope.event)
        if isinstance(envelope.event, Done):
            self.done = envelope.event
            self.metrics.observe_run(envelope.event, time.monotonic() - self._started)

    def close_out(self, message: str, *, error_type: str, status: Literal["error", "cancelled"]) -> list[Envelope]:
        """When no ``done`` was stored: store and return an ``error`` and a ``done`` event; else nothing."""
        if self.done is not None:
            return []
        now = time.time()
        error = RunError(message=message, error_type=error_type, recoverable=False)
        out = [
            Envelope(run_id=self.run_id, seq=self.last_seq + 1, ts=now, event=error),
            Envelope(run_id=self.run_id, seq=self.last_seq + 2, ts=now, event=Done(status=status)),
        ]
        for envelope in out:
            self.record(envelope)
        return out


_STOP = object()
_END = object()
_CANCEL = object()


async def _pump(events: AsyncIterator[Envelope], recorder: RunRecorder, queue: asyncio.Queue[object]) -> None:
    try:
        async for envelope in events:
            recorder.record(envelope)
            queue.put_nowait(envelope)
    except Exception as exc:
        log.exception("run %s failed outside the agent's own error handling", recorder.run_id)
        ending = recorder.close_out("internal error in the run", error_type=type(exc).__name__, status="error")
        for envelope in ending:
            queue.put_nowait(envelope)
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
        queue.put_nowait(_END)


async def _watch(stop: anyio.Event, queue: asyncio.Queue[object], item: object = _STOP) -> None:
    await stop.wait()
    queue.put_nowait(item)


async def drive(
    events: AsyncIterator[Envelope], recorder: RunRecorder, stop: anyio.Event, cancel: anyio.Event | None = None
) -> AsyncIterator[Envelope]:
    """Yield the run's events as stored; cancel the run when the consumer leaves or ``stop`` / ``cancel`` is set."""
    queue: asyncio.Queue[object] = asyncio.Queue()
    pump = asyncio.create_task(_pump(events, recorder, queue), name=f"run-{recorder.run_id}")
    watchers = [asyncio.create_task(_watch(stop, queue))]
    if cancel is not None:
        watchers.append(asyncio.create_task(_watch(cancel, queue, _CANCEL)))
    reason: tuple[str, str, Literal["error", "cancelled"]] = ("client disconnected", "ClientDisconnected", "cancelled")
    try:
        while True:
            item = await queue.get()
            if item is _END:
                reason = ("run ended without a done event", "RunIncomplete", "error")
                break
            if item is _STOP:
                reason = ("server shutting down", "ServerShutdown", "cancelled")
                break
            if item is _CANCEL:
                reason = ("cancelled on request", "CancelRequested", "cancelled")
                break
            assert isinstance(item, Envelope)
            yield item
            if isinstance(item.event, Done):
                return
    finally:
        with anyio.CancelScope(shield=True):
            await _cancel(pump, *watchers)
            ending = recorder.close_out(reason[0], error_type=reason[1], status=reason[2])
        if ending:
            log.info("run %s closed out: %s", recorder.run_id, reason[0])
    for envelope in ending:
        yield envelope


async def _cancel(*tasks: asyncio.Task[None]) -> None:
    for task in tasks:
        task.cancel()
    with anyio.move_on_after(_CLOSE_TIMEOUT_S):
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


class OpenStreams:
    """The stop events of open streams, so a shutdown can end them all with a final event."""

    def __init__(self) -> None:
        self._events: set[anyio.Event] = set()
        self.draining = False
        """True once ``drain`` was called: new streams stop at once."""

    def open(self) -> anyio.Event:
        """A stop event for a new stream (already set while draining)."""
        event = anyio.Event()
        if self.draining:
            event.set()
        self._events.add(event)
        return event

    def close(self, event: anyio.Event) -> None:
        """Forget a finished stream."""
        self._events.discard(event)

    def drain(self) -> None:
        """Stop every open stream (each sends its final events)."""
        self.draining = True
        for event in self._events:
            event.set()

    def __len__(self) -> int:
        return len(self._events)
