"""Real ``waypoint serve`` processes (scripted agent) on free loopback ports, and SSE reading over HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

SERVER = Path(__file__).with_name("replica_server.py")
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def kill9(self) -> None:
        """SIGKILL: no shutdown code runs."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)  # reaped, so its pid is really gone

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()


def start_server(data_dir: Path, log: Path, env: dict[str, str]) -> Server:
    """Start one server and wait until ``/healthz`` answers (or fail with its log)."""
    port = free_port()
    full = {k: v for k, v in os.environ.items() if not k.startswith("WAYPOINT_")}
    full.update(
        {
            "WAYPOINT_DATA_DIR": str(data_dir),
            "WAYPOINT_API_REPLAY_POLL_S": "0.05",
            "WAYPOINT_API_HEARTBEAT_S": "0.5",
            "WAYPOINT_API_LEASE_S": "3",
            "WAYPOINT_API_CANCEL_POLL_S": "0.1",
            "WAYPOINT_API_SHUTDOWN_GRACE_S": "0.5",
            "PYTHONPATH": str(REPO),
            **env,
        }
    )
    out = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(port)], env=full, stdout=out, stderr=out, cwd=REPO
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # a cold start on a loaded 2-core machine took over 60 s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return Server(proc, url, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"server did not start:\n{log.read_text()[-3000:]}")


@contextmanager
def servers(*specs: tuple[Path, Path, dict[str, str]]) -> Iterator[list[Server]]:
    started: list[Server] = []
    try:
        for spec in specs:
            started.append(start_server(*spec))
        yield started
    finally:
        for s in started:
            s.stop()


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Parse SSE ``data:`` lines into envelopes (keep-alive comments skipped)."""
    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:].strip())


def replay(url: str, run_id: str, *, after: int = -1, timeout: float = 20.0) -> list[dict[str, Any]]:
    """``GET /v1/runs/{id}/events`` read to its end (bounded by ``timeout``)."""
    with httpx.stream("GET", f"{url}/v1/runs/{run_id}/events", params={"after": after}, timeout=timeout) as r:
        r.raise_for_status()
        return list(sse_events(r.iter_lines()))
