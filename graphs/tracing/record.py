"""Trace recording in one place: every entry point (API, ``waypoint ask``, evals) stores a run's events here.

A ``Recorder`` stores each envelope in order, tells an optional observer (the API's metrics) and writes the
ending a run could not (``close_out``); ``recorded`` registers a run and records its stream as it passes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Literal, Protocol

from graphs.events import Done, Envelope, RunError, RunEvent
from graphs.tracing.run_store import RunStore


class RunObserver(Protocol):
    """Something that counts runs as they are recorded (the API's Prometheus metrics)."""

    def observe_event(self, event: RunEvent) -> None:
        """Count one event."""
        ...

    def observe_run(self, done: Done, duration_s: float) -> None:
        """Count a finished run and its wall time."""
        ...


class Recorder:
    """Stores (and lets an observer count) a run's events in order; writes the ending the agent could not."""

    def __init__(self, store: RunStore, run_id: str, *, observer: RunObserver | None = None) -> None:
        self.store = store
        self.observer = observer
        self.run_id = run_id
        self.last_seq = -1
        self.done: Done | None = None
        self._started = time.monotonic()

    def record(self, envelope: Envelope) -> None:
        """Store one event and tell the observer."""
        self.store.append(envelope)
        self.last_seq = envelope.seq
        if self.observer is not None:
            self.observer.observe_event(envelope.event)
        if isinstance(envelope.event, Done):
            self.done = envelope.event
            if self.observer is not None:
                self.observer.observe_run(envelope.event, time.monotonic() - self._started)

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


async def recorded(
    envelopes: AsyncIterator[Envelope],
    store: RunStore,
    *,
    run_id: str,
    tenant: str,
    question: str,
    thread_id: str | None = None,
) -> AsyncIterator[Envelope]:
    """Register the run, then store and pass on each envelope (the trace viewer can open it afterwards)."""
    store.start_run(run_id=run_id, tenant=tenant, question=question, thread_id=thread_id)
    recorder = Recorder(store, run_id)
    async for envelope in envelopes:
        recorder.record(envelope)
        yield envelope
