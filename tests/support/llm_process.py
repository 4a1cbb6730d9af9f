"""Start the stub LLM server (``stub_llm.py``) as a real process and script it over its control endpoint."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

SCRIPT = Path(__file__).resolve().parent / "stub_llm.py"


class StubLLM:
    """A running stub server: its base URL and control calls."""

    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.url}/v1"
        """What ``OpenAICompatibleLLM`` takes."""

    def control(self, **body: Any) -> None:
        """Set rules, default reply, faults, token delay; ``reset=True`` clears cache and log."""
        httpx.post(f"{self.url}/control", json=body, timeout=5).raise_for_status()

    def log(self) -> list[dict[str, Any]]:
        """The completion requests received so far."""
        out: list[dict[str, Any]] = httpx.get(f"{self.url}/control/log", timeout=5).json()
        return out


@contextmanager
def stub_llm() -> Iterator[StubLLM]:
    """Run the stub server on a free loopback port for the duration of the block (always stopped after)."""
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--port", "0"], stdout=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"stub LLM server did not start: {line!r}")
        yield StubLLM(proc, int(line.split()[1]))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
