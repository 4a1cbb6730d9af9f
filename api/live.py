"""Drive one run for one client: store every event as it comes, forward it, close out what ends early.

The run is read through the one event pump (``graphs.streaming.pump``): the agent runs in the pump's task,
the response generator reads the pump. When the client goes away the response is cancelled, the generator
closes the pump, and the cancellation reaches the agent's in-flight LLM stream. On server shutdown or a
cancel request the pump stops waiting, cancels the run and the generator sends a final ``error`` + ``done``
pair, recorded by ``graphs.tracing.record.Recorder`` like every other run.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Literal

import anyio

from graphs.events import Done, Envelope
from graphs.streaming import Emit, Stopped, pump
from graphs.tracing.record import Recorder

log = logging.getLogger(__name__)

_CLOSE_TIMEOUT_S = 2.0
"""How long a cancelled run may take to release its resources before we stop waiting."""

Reason = tuple[str, str, Literal["error", "cancelled"]]

_STOPPED: dict[str, Reason] = {
    "stop": ("server shutting down", "ServerShutdown", "cancelled"),
    "cancel": ("cancelled on request", "CancelRequested", "cancelled"),
}
"""Why a run ended early, by the stop signal that ended it: message, error type, ``done`` status."""


async def drive(
    events: AsyncIterator[Envelope], recorder: Recorder, stop: anyio.Event, cancel: anyio.Event | None = None
) -> AsyncIterator[Envelope]:
    """Yield the run's events as stored; cancel the run when the consumer leaves or ``stop`` / ``cancel`` is set."""

    async def feed(emit: Emit) -> None:
        try:
            async for envelope in events:
                recorder.record(envelope)
                emit(envelope)
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    stops = {"stop": stop} if cancel is None else {"stop": stop, "cancel": cancel}
    items = pump(feed, stops=stops, name=f"run-{recorder.run_id}", close_timeout_s=_CLOSE_TIMEOUT_S)
    reason: Reason = ("client disconnected", "ClientDisconnected", "cancelled")
    try:
        try:
            async for item in items:
                if isinstance(item, Stopped):
                    reason = _STOPPED[item.reason]
                    break
                assert isinstance(item, Envelope)
                yield item
                if isinstance(item.event, Done):
                    return
            else:
                reason = ("run ended without a done event", "RunIncomplete", "error")
        except Exception as exc:
            log.exception("run %s failed outside the agent's own error handling", recorder.run_id)
            reason = ("internal error in the run", type(exc).__name__, "error")
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                await items.aclose()
            ending = recorder.close_out(reason[0], error_type=reason[1], status=reason[2])
        if ending:
            log.info("run %s closed out: %s", recorder.run_id, reason[0])
    for envelope in ending:
        yield envelope


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
