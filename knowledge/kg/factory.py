"""Open the configured graph store: Neo4j when ``neo4j.uri`` is set, else FalkorDB (embedded or at a URL)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from knowledge.kg.falkordb_server import FalkorDBServer
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.kg.neo4j_store import Neo4jStore
from knowledge.kg.store import GraphStore

if TYPE_CHECKING:
    from knowledge.settings import Settings


@dataclass
class GraphRuntime:
    """The store plus, for the embedded default, the server process it owns."""

    store: GraphStore
    make_store: Callable[[], GraphStore]
    """A fresh client of the same store (for another event loop, e.g. the blocking ingest sink)."""
    server: FalkorDBServer | None = None

    async def aclose(self) -> None:
        """Close the client, then stop the embedded server if there is one."""
        await self.store.aclose()
        if self.server is not None:
            self.server.stop()


def open_graph(settings: Settings) -> GraphRuntime:
    """Connect to Neo4j or FalkorDB per settings; starts the embedded FalkorDB (blocking) when needed."""
    neo, fk = settings.neo4j, settings.falkordb
    if neo.uri:
        uri, password = neo.uri, neo.password.get_secret_value() if neo.password else None

        def neo4j_store() -> GraphStore:
            return Neo4jStore(uri, user=neo.user, password=password, database=neo.database)

        return GraphRuntime(neo4j_store(), neo4j_store)
    server = None
    if fk.url:
        url = urlparse(fk.url)
        host, port, password = url.hostname or "127.0.0.1", url.port or 6379, url.password
    else:
        server = FalkorDBServer(
            settings.path("falkordb", "x").parent, port=fk.port, startup_timeout_s=fk.startup_timeout_s
        )
        host, port, password = "127.0.0.1", server.start(), None

    revive = server.revive if server is not None else None

    def falkordb_store() -> GraphStore:
        return FalkorDBStore(host, port, graph_prefix=fk.graph_prefix, password=password, revive=revive)

    return GraphRuntime(falkordb_store(), falkordb_store, server)
