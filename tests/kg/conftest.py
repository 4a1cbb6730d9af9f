"""Graph test fixtures: one real FalkorDB server per session; stores parametrised over both adapters."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from knowledge.kg.falkordb_server import FalkorDBServer
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.kg.neo4j_store import Neo4jStore
from knowledge.kg.store import GraphStore
from knowledge.settings import Settings

BACKENDS = ["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)]
"""FalkorDB always; Neo4j only when WAYPOINT_NEO4J_URI is set."""


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FalkorDBServer]:
    """The real packaged redis-server + FalkorDB module, on loopback, for the whole session."""
    server = FalkorDBServer(tmp_path_factory.mktemp("falkordb"))
    server.start()
    yield server
    server.stop()


def make_store(backend: str, falkordb_server: FalkorDBServer) -> GraphStore:
    """A client of the requested backend (skips Neo4j unless configured through Settings)."""
    if backend == "falkordb":
        return FalkorDBStore("127.0.0.1", falkordb_server.port, graph_prefix="wptest")
    neo = Settings().neo4j
    if not neo.uri:
        pytest.skip("WAYPOINT_NEO4J_URI is not set")
    password = neo.password.get_secret_value() if neo.password else None
    return Neo4jStore(neo.uri, user=neo.user, password=password, database=neo.database)


@pytest.fixture
def tenant() -> str:
    """A fresh tenant per test, so tests never see each other's data."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture(params=BACKENDS)
async def store(
    request: pytest.FixtureRequest, falkordb_server: FalkorDBServer, tenant: str
) -> AsyncIterator[GraphStore]:
    """A set-up store for ``tenant``, dropped afterwards."""
    s = make_store(request.param, falkordb_server)
    await s.setup(tenant)
    yield s
    await s.drop(tenant)
    await s.aclose()


@pytest.fixture
def settings_dir(tmp_path: Path) -> Path:
    """A data dir for tests that start their own server."""
    return tmp_path / "data"
