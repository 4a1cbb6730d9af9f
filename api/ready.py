"""Bounded readiness checks: one check of each backend in flight at a time, its result reused for a while.

A probe never starts a second check of a backend while one runs (a check in a worker thread cannot be
stopped by a timeout, so starting one per probe would pile threads up on a busy backend); it waits for
the running one up to the timeout and counts it as down if it has not finished.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from api.deps import ReadyCheck

log = logging.getLogger(__name__)


@dataclass
class _Slot:
    result: bool | None = None
    at: float = 0.0
    task: asyncio.Task[bool] | None = None


@dataclass
class ReadyProbes:
    """The state of each named check: last result, when it came, the check in flight."""

    clock: Callable[[], float] = time.monotonic
    started: int = 0
    """Checks started so far (one per backend per cache period at most)."""
    _slots: dict[str, _Slot] = field(default_factory=dict)

    async def probe(self, name: str, check: ReadyCheck, *, timeout_s: float, cache_s: float) -> bool:
        """The check's result: cached when fresh, else from the (single) check in flight, False on timeout."""
        now = self._now()
        slot = self._slots.setdefault(name, _Slot())
        if slot.result is not None and now - slot.at < cache_s:
            return slot.result
        task = slot.task
        if task is None:
            task = slot.task = asyncio.create_task(self._run(name, check, slot), name=f"ready-{name}")
            self.started += 1
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        return bool(done) and task.result()

    async def _run(self, name: str, check: ReadyCheck, slot: _Slot) -> bool:
        try:
            result = bool(await check())
        except Exception:
            log.warning("readiness check %r failed", name, exc_info=True)
            result = False
        slot.result, slot.at = result, self._now()
        slot.task = None
        return result

    def _now(self) -> float:
        return self.clock()

    async def aclose(self) -> None:
        """Cancel checks still in flight (at shutdown)."""
        tasks = [s.task for s in self._slots.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
