"""A short description of the machine an eval ran on (for results that say where they came from)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _ram_gib() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def describe_machine() -> dict[str, object]:
    """OS, CPU model, usable cores, RAM and Python version."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "os": platform.platform(),
        "cpu": _cpu_model(),
        "cores": cores,
        "ram_gib": _ram_gib(),
        "python": platform.python_version(),
    }
