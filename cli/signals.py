"""SIGTERM as an interrupt, so a terminated command cleans up like one stopped with Ctrl-C.

Python's default SIGTERM disposition ends the process at once: no ``finally`` blocks, no context managers,
no ``atexit`` hooks — and the embedded FalkorDB's ``redis-server`` child is left running. Raising
``KeyboardInterrupt`` instead unwinds the command (an eval keeps every record written so far and resumes).
``waypoint serve`` is unaffected: uvicorn installs its own handlers for a graceful shutdown, and ``waypoint
worker`` cancels its main task instead (``cancel_on_signals``): an exception raised wherever the event loop
happens to be can leave a connection or a job half-handled, a cancellation is delivered at an ``await``.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from types import FrameType

log = logging.getLogger(__name__)
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def interrupt_on_sigterm() -> None:
    """Make SIGTERM raise ``KeyboardInterrupt`` in the main thread (call from the main thread)."""
    signal.signal(signal.SIGTERM, _interrupt)


def cancel_on_signals(task: asyncio.Task[None], what: str) -> None:
    """The first SIGTERM or SIGINT cancels ``task`` (a graceful stop, described by ``what``); the handlers are
    then removed, so a second signal acts at once (SIGTERM ends the process, SIGINT raises ``KeyboardInterrupt``).
    Call from inside the running loop."""
    loop = asyncio.get_running_loop()

    def stop(signum: int) -> None:
        log.warning("signal %d: %s (signal again to stop at once)", signum, what)
        for sig in _STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        task.cancel()

    for sig in _STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
