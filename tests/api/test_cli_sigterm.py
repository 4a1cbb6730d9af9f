"""A ``waypoint`` command stopped with SIGTERM cleans up: the embedded FalkorDB's redis-server does not outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # real embedding model, Qdrant and FalkorDB (or a child process)

# A command's shape: the CLI's SIGTERM handling, FalkorDB started, then an asyncio wait the signal interrupts.
# "with": the server is owned by a context manager (finally blocks must run); "atexit": only its atexit hook.
_CHILD = """
import asyncio, sys
from pathlib import Path
from cli.signals import interrupt_on_sigterm
from knowledge.kg.falkordb_server import FalkorDBServer

if sys.argv[2] == "handled":
    interrupt_on_sigterm()

async def main():
    server = FalkorDBServer(Path(sys.argv[1]))
    if sys.argv[3] == "with":
        with server:
            print(server._proc.pid, flush=True)
            await asyncio.sleep(120)
    else:
        server.start()
        print(server._proc.pid, flush=True)
        await asyncio.sleep(120)

asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie no one has reaped yet counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def _terminate(tmp_path: Path, mode: str, owner: str) -> tuple[int, int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path / "fk"), mode, owner],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    redis_pid = int(proc.stdout.readline())
    assert _alive(redis_pid)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=30)
    return code, redis_pid


@pytest.mark.parametrize("owner", ["with", "atexit"])
def test_sigterm_stops_the_falkordb_child(tmp_path: Path, owner: str) -> None:
    code, redis_pid = _terminate(tmp_path, "handled", owner)
    assert code != 0  # interrupted, not a clean finish
    deadline = time.monotonic() + 10
    while _alive(redis_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(redis_pid)
    assert (tmp_path / "fk" / "falkordb.rdb").exists()  # stopped with a snapshot, not killed


def test_without_the_handler_the_child_still_dies_with_its_parent(tmp_path: Path) -> None:
    # Python's default SIGTERM skips finally blocks and atexit hooks; the server's parent-death signal
    # (PR_SET_PDEATHSIG) still stops it, with a snapshot
    code, redis_pid = _terminate(tmp_path, "default", "with")
    try:
        assert code == -signal.SIGTERM
        deadline = time.monotonic() + 10
        while _alive(redis_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(redis_pid)
        assert (tmp_path / "fk" / "falkordb.rdb").exists()
    finally:
        if _alive(redis_pid):
            os.kill(redis_pid, signal.SIGKILL)
