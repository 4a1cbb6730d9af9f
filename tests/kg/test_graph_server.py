"""The embedded FalkorDB process: starts on loopback, persists in its data dir, stops; a dead store is a typed error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from knowledge.kg import EntityRecord, GraphBatch, GraphStoreUnavailable
from knowledge.kg.factory import open_graph
from knowledge.kg.falkordb_server import FalkorDBServer, free_port, servers_of
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.settings import Settings


async def test_graph_survives_a_restart_in_the_same_data_dir(tmp_path: Path) -> None:
    with FalkorDBServer(tmp_path / "fk") as server:
        assert server.running
        store = FalkorDBStore("127.0.0.1", server.port)
        await store.setup("acme")
        await store.write("acme", GraphBatch(entities=[EntityRecord(key="k", name="Kept")]))
        await store.aclose()
    assert not server.running
    assert (tmp_path / "fk" / "falkordb.rdb").exists()
    with FalkorDBServer(tmp_path / "fk") as again:
        store = FalkorDBStore("127.0.0.1", again.port)
        (hit,) = await store.entities_by_key("acme", ["k"])
        assert hit.name == "Kept"
        await store.aclose()


def test_a_relative_data_dir_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # redis-server chdirs into --dir, so a relative log path would be looked up under itself and fail to open
    monkeypatch.chdir(tmp_path)
    with FalkorDBServer(Path(".waypoint") / "falkordb") as server:
        assert server.running
    assert (tmp_path / ".waypoint" / "falkordb" / "falkordb.log").exists()


async def test_a_store_that_is_down_gives_a_typed_error(tmp_path: Path) -> None:
    server = FalkorDBServer(tmp_path / "fk")
    server.start()
    store = FalkorDBStore("127.0.0.1", server.port)
    await store.setup("t")
    server.stop()
    server.stop()
    with pytest.raises(GraphStoreUnavailable, match="unreachable"):
        await store.stats("t")
    await store.aclose()
    nobody = FalkorDBStore("127.0.0.1", free_port())
    with pytest.raises(GraphStoreUnavailable):
        await nobody.entities_by_key("t", ["x"])
    await nobody.aclose()


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises((GraphStoreUnavailable, OSError)):
        FalkorDBServer(blocker / "sub", startup_timeout_s=5).start()


async def test_open_graph_starts_the_embedded_default(settings: Settings) -> None:
    runtime = open_graph(settings)
    try:
        assert runtime.store.backend == "falkordb"
        assert runtime.server is not None and runtime.server.running
        assert str(runtime.server.data_dir).startswith(str(settings.data_dir))
        await runtime.store.setup("default")
        assert (await runtime.store.stats("default")).entities == 0
    finally:
        await runtime.aclose()
    assert not runtime.server.running


# -- one server per data dir ----------------------------------------------------------------------

_OWNER = """
import sys, time
from pathlib import Path
from knowledge.kg.falkordb_server import FalkorDBServer
server = FalkorDBServer(Path(sys.argv[1]))
server.start()
print(server.pid, server.port, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


@contextmanager
def _owner(data_dir: Path) -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    """Another process that starts (and owns) the data dir's server: yields it, the server pid and port."""
    proc = subprocess.Popen([sys.executable, "-c", _OWNER, str(data_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        pid, port = map(int, proc.stdout.readline().split())
        yield proc, pid, port
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def _write(port: int, key: str) -> None:
    store = FalkorDBStore("127.0.0.1", port)
    await store.setup("acme")
    await store.write("acme", GraphBatch(entities=[EntityRecord(key=key, name=key.title())]))
    await store.aclose()


async def _keys(port: int, *keys: str) -> list[str]:
    store = FalkorDBStore("127.0.0.1", port)
    hits = await store.entities_by_key("acme", list(keys))
    await store.aclose()
    return sorted(h.key for h in hits)


async def test_kill_9_of_the_owner_takes_its_server_down_and_keeps_the_writes(tmp_path: Path) -> None:
    with _owner(tmp_path / "fk") as (proc, pid, port):
        await _write(port, "before")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _wait_gone(pid, 20), "redis-server outlived its owner's kill -9"
    assert servers_of(tmp_path / "fk") == []
    with FalkorDBServer(tmp_path / "fk") as again:
        assert await _keys(again.port, "before") == ["before"]  # it saved on the way out


async def test_a_second_starter_reuses_the_live_server_of_the_data_dir(tmp_path: Path) -> None:
    with _owner(tmp_path / "fk") as (_proc, pid, port):
        second = FalkorDBServer(tmp_path / "fk")
        assert second.start() == port and second.pid == pid and not second.owned and second.running
        await _write(port, "shared")
        assert servers_of(tmp_path / "fk") == [pid]
        second.stop()  # not its server: stays up for the owner
        assert _alive(pid) and await _keys(port, "shared") == ["shared"]


async def test_an_orphan_on_the_data_dir_is_stopped_before_a_fresh_start(tmp_path: Path) -> None:
    data = tmp_path / "fk"
    data.mkdir()
    orphan_port = free_port()
    cmd = FalkorDBServer(data).command(orphan_port)  # as an older version left it: no pidfile, no death signal
    orphan = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                await _write(orphan_port, "orphaned")
                break
            except GraphStoreUnavailable:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        with FalkorDBServer(data) as server:
            assert orphan.wait(timeout=20) == 0  # SIGTERM: saved, then exited
            assert servers_of(data) == [server.pid] and server.owned
            assert await _keys(server.port, "orphaned") == ["orphaned"]
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()


def test_concurrent_starters_end_with_one_server(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", _OWNER, str(tmp_path / "fk")], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    try:
        seen = {tuple(map(int, p.stdout.readline().split())) for p in procs if p.stdout is not None}
        assert len(seen) == 1 and len(servers_of(tmp_path / "fk")) == 1, seen
    finally:
        for p in procs:
            p.kill()
            p.wait()
    (pid, _port) = next(iter(seen))
    assert _wait_gone(pid, 20)


async def test_a_reused_server_whose_owner_dies_is_revived_on_the_same_port(tmp_path: Path) -> None:
    with _owner(tmp_path / "fk") as (proc, pid, port):
        mine = FalkorDBServer(tmp_path / "fk")
        assert mine.start() == port and not mine.owned
        store = FalkorDBStore("127.0.0.1", port, revive=mine.revive)
        await store.setup("acme")
        await store.write("acme", GraphBatch(entities=[EntityRecord(key="kept", name="Kept")]))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _wait_gone(pid, 20)
    try:
        (hit,) = await store.entities_by_key("acme", ["kept"])  # reconnects to the revived server
        assert hit.name == "Kept" and mine.owned and mine.port == port
        assert servers_of(tmp_path / "fk") == [mine.pid]
    finally:
        await store.aclose()
        mine.stop()
    assert servers_of(tmp_path / "fk") == []
