"""The embedded FalkorDB process: starts on loopback, persists in its data dir, stops; a dead store is a typed error."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.kg import EntityRecord, GraphBatch, GraphStoreUnavailable
from knowledge.kg.factory import open_graph
from knowledge.kg.falkordb_server import FalkorDBServer, free_port
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
