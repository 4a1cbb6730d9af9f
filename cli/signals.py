"""SIGTERM as an interrupt, so a terminated command cleans up like one stopped with Ctrl-C.

Python's default SIGTERM disposition ends the process at once: no ``finally`` blocks, no context managers,
no ``atexit`` hooks — and the embedded FalkorDB's ``redis-server`` child is left running. Raising
``KeyboardInterrupt`` instead unwinds the command (an eval keeps every record written so far and resumes).
``waypoint serve`` is unaffected: uvicorn installs its own handlers for a graceful shutdown.
"""

from __future__ import annotations

import signal
from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def interrupt_on_sigterm() -> None:
    """Make SIGTERM raise ``KeyboardInterrupt`` in the main thread (call from the main thread)."""
    signal.signal(signal.SIGTERM, _interrupt)
