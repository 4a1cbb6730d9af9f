"""Admission control for agent runs: a bounded number run at once, a bounded queue waits, the rest get 429.

The embedded llama.cpp serves ``local.n_parallel`` requests at once; a run beyond that waits for a
slot inside the LLM client until its read timeout. Here a run is admitted only while fewer than
``limit`` run; up to ``queue`` more wait (for at most ``wait_s``) before their response starts, and
any request past that is refused at once with 429 and a ``Retry-After`` estimated from how long
runs have been holding their slots. A slot is held from admission until the run's event stream
ends (answer, error, cancel or client gone).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Literal

from api.errors import APIError
from api.metrics import Metrics
from knowledge.settings import APIConfig

_MAX_RETRY_AFTER_S = 120
_EMA_WEIGHT = 0.2
"""Weight of the newest run in the moving average of slot hold times."""


OVERLOADED_DOC: dict[int | str, dict[str, object]] = {
    429: {
        "description": "Every run slot is taken and the wait queue is full (or the wait ran out): "
        "retry after the `Retry-After` seconds.",
        "headers": {"Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}},
    }
}
"""The 429 of admission control, for the OpenAPI document of the chat routes."""


class Ticket:
    """One admitted run's slot; ``release`` gives it back (once; later calls do nothing)."""

    def __init__(self, admission: Admission) -> None:
        self._admission = admission
        self._since = time.monotonic()
        self._released = False

    def release(self) -> None:
        """Give the slot back to the next waiting run."""
        if self._released:
            return
        self._released = True
        self._admission._release(time.monotonic() - self._since)


class Admission:
    """At most ``limit`` runs at once (None: no limit), ``queue`` waiting for up to ``wait_s`` seconds."""

    def __init__(
        self, *, limit: int | None, queue: int = 0, wait_s: float = 30.0, metrics: Metrics | None = None
    ) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"the run limit must be at least 1, got {limit}")
        if queue < 0:
            raise ValueError(f"the queue length must be 0 or more, got {queue}")
        self.limit = limit
        self.queue = queue
        self.wait_s = wait_s
        self._metrics = metrics
        self._slots = asyncio.Semaphore(limit) if limit is not None else None
        self.running = 0
        self.waiting = 0
        self._hold_s = 1.0
        """Moving average of how long a run holds its slot (seconds)."""

    @classmethod
    def unlimited(cls) -> Admission:
        """No limit (an app whose backend's parallelism is unknown and not configured)."""
        return cls(limit=None)

    def retry_after_s(self) -> int:
        """Seconds until a slot is likely free for one more request: the queue ahead, served ``limit`` at a time."""
        per_slot = (self.waiting + 1) / (self.limit or 1)
        return max(1, min(_MAX_RETRY_AFTER_S, math.ceil(self._hold_s * per_slot)))

    async def admit(self) -> Ticket:
        """A slot for one run, after waiting in the queue if need be; a 429 ``overloaded`` when none comes."""
        if self._slots is None:
            return self._admitted("admitted")
        if not self._slots.locked():
            await self._slots.acquire()  # free: returns at once
            return self._admitted("admitted")
        if self.waiting >= self.queue:
            raise self._refuse("full", f"{self.running} runs in progress and {self.waiting} waiting")
        self.waiting += 1
        self._gauges()
        try:
            async with asyncio.timeout(self.wait_s):
                await self._slots.acquire()
        except TimeoutError:
            raise self._refuse("timeout", f"no run slot came free within {self.wait_s:g} s") from None
        finally:
            self.waiting -= 1
            self._gauges()
        return self._admitted("queued")

    def _admitted(self, outcome: Literal["admitted", "queued"]) -> Ticket:
        self.running += 1
        self._count(outcome)
        self._gauges()
        return Ticket(self)

    def _release(self, held_s: float) -> None:
        self.running -= 1
        self._hold_s = (1 - _EMA_WEIGHT) * self._hold_s + _EMA_WEIGHT * held_s
        if self._slots is not None:
            self._slots.release()
        self._gauges()

    def _refuse(self, outcome: Literal["full", "timeout"], why: str) -> APIError:
        self._count(f"rejected_{outcome}")
        retry = self.retry_after_s()
        return APIError(
            429,
            "overloaded",
            f"server busy: {why}; retry after {retry} s",
            code="too_many_runs",
            headers={"Retry-After": str(retry)},
        )

    def _count(self, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.admission.labels(outcome=outcome).inc()

    def _gauges(self) -> None:
        if self._metrics is not None:
            self._metrics.admission_running.set(self.running)
            self._metrics.admission_waiting.set(self.waiting)


def admission_for(settings: APIConfig, backend_slots: int | None, metrics: Metrics | None = None) -> Admission:
    """The admission control of one front end (HTTP API or MCP): ``api.*`` limits, else the backend's slots."""
    limit, queued = run_limits(settings.max_concurrent_runs, settings.max_queued_runs, backend_slots)
    return Admission(limit=limit, queue=queued, wait_s=settings.admission_wait_s, metrics=metrics)


def run_limits(max_runs: int | None, max_queued: int | None, backend_slots: int | None) -> tuple[int | None, int]:
    """The run limit and queue length: as configured, else the LLM backend's parallel slots (None: no limit)."""
    limit = max_runs if max_runs is not None else backend_slots
    if limit is None:
        return None, 0
    return limit, max_queued if max_queued is not None else limit
