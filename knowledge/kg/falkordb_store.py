"""FalkorDB adapter: one graph per tenant (``<prefix>_<tenant>``), queried with the ``falkordb`` client.

Dialect differences live here: full-text index DDL and query (``db.idx.fulltext.*``, RediSearch
syntax), the unique constraint (``GRAPH.CONSTRAINT``), and undirected shortest paths
(``algo.SPpaths`` with ``relDirection: 'both'``; Cypher ``shortestPath`` is directed only here).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import redis.exceptions
from falkordb.asyncio import FalkorDB

from knowledge.kg.cypher_store import CypherGraphStore, Row, fulltext_words
from knowledge.kg.schema import Edge, EntityHit, GraphPath, check_tenant
from knowledge.kg.store import GraphStoreError, GraphStoreUnavailable

FULLTEXT_QUERY = """
CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score
RETURN node.key, node.name, node.type, score ORDER BY score DESC LIMIT $limit
"""

SHORTEST_PATH = """
MATCH (a:Entity {key: $src}), (b:Entity {key: $dst})
CALL algo.SPpaths({sourceNode: a, targetNode: b, relTypes: ['RELATED'], maxLen: $max_hops,
                   relDirection: 'both', pathCount: 1}) YIELD path
RETURN [n IN nodes(path) | n.key], [n IN nodes(path) | n.name],
       [r IN relationships(path) | [startNode(r).key, endNode(r).key, r.predicate, r.weight, r.chunk_ids]]
"""

_ALREADY = ("already indexed", "already exists")


class FalkorDBStore(CypherGraphStore):
    """The embedded default graph store (and any FalkorDB server)."""

    backend = "falkordb"

    def __init__(
        self,
        host: str,
        port: int,
        *,
        graph_prefix: str = "waypoint",
        password: str | None = None,
        revive: Callable[[], bool] | None = None,
    ) -> None:
        """``revive`` (blocking) is called once when the server is unreachable: True means it was started
        again on the same address and the query is retried (the embedded server shared with another process)."""
        self._revive = revive
        self._connect = {"host": host, "port": port, "password": password}
        self._db_client: FalkorDB | None = None
        self._prefix = graph_prefix
        self.address = f"{host}:{port}"

    @property
    def _db(self) -> FalkorDB:
        """The client, made on first use (the falkordb client connects in its constructor)."""
        if self._db_client is None:
            try:
                self._db_client = FalkorDB(**self._connect, socket_connect_timeout=5, socket_timeout=60)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
                raise GraphStoreUnavailable(f"FalkorDB at {self.address} is unreachable: {exc}") from exc
        return self._db_client

    def graph_name(self, tenant: str) -> str:
        """The tenant's graph name (the tenant id is allow-listed first)."""
        return f"{self._prefix}_{check_tenant(tenant)}"

    async def _call(self, tenant: str, query: str, params: dict[str, Any]) -> Any:
        try:
            return await self._query(tenant, query, params)
        except GraphStoreUnavailable:
            if self._revive is None or not await asyncio.to_thread(self._revive):
                raise
            return await self._query(tenant, query, params)

    async def _query(self, tenant: str, query: str, params: dict[str, Any]) -> Any:
        graph = self._db.select_graph(self.graph_name(tenant))
        try:
            return await graph.query(query, params)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise GraphStoreUnavailable(f"FalkorDB at {self.address} is unreachable: {exc}") from exc
        except redis.exceptions.RedisError as exc:
            raise GraphStoreError(f"FalkorDB refused a query on graph {self.graph_name(tenant)!r}: {exc}") from exc

    async def _run(self, tenant: str, query: str, params: dict[str, Any]) -> list[Row]:
        result = await self._call(tenant, query, params)
        return list(result.result_set)

    async def _ddl(self, tenant: str, *args: Any) -> None:
        try:
            await self._db.execute_command(*args)
        except redis.exceptions.ConnectionError as exc:
            raise GraphStoreUnavailable(f"FalkorDB at {self.address} is unreachable: {exc}") from exc
        except redis.exceptions.ResponseError as exc:
            if not any(s in str(exc) for s in _ALREADY):
                raise GraphStoreError(f"FalkorDB DDL failed on {self.graph_name(tenant)!r}: {exc}") from exc

    async def setup(self, tenant: str) -> None:
        """Range indexes, the unique key constraint and the full-text index on entity names."""
        name = self.graph_name(tenant)
        for ddl in (
            "CREATE INDEX FOR (e:Entity) ON (e.key)",
            "CREATE INDEX FOR (c:Chunk) ON (c.id)",
            "CREATE INDEX FOR (c:Chunk) ON (c.doc_id)",
            "CALL db.idx.fulltext.createNodeIndex('Entity', 'name')",
        ):
            await self._ddl(tenant, "GRAPH.QUERY", name, ddl)
        await self._ddl(tenant, "GRAPH.CONSTRAINT", "CREATE", name, "UNIQUE", "NODE", "Entity", "PROPERTIES", 1, "key")

    async def entities_fulltext(self, tenant: str, words: Sequence[str], limit: int = 10) -> list[EntityHit]:
        """RediSearch full-text over entity names: the words OR-ed."""
        toks = fulltext_words(words)
        if not toks:
            return []
        rows = await self._run(tenant, FULLTEXT_QUERY, {"q": "|".join(toks), "limit": limit})
        return [EntityHit(key=r[0], name=r[1], type=r[2] or "", score=float(r[3])) for r in rows]

    async def shortest_path(self, tenant: str, src: str, dst: str, *, max_hops: int = 4) -> GraphPath | None:
        """Undirected shortest path by ``algo.SPpaths``."""
        rows = await self._run(tenant, SHORTEST_PATH, {"src": src, "dst": dst, "max_hops": int(max_hops)})
        if not rows:
            return None
        keys, names, rels = rows[0]
        edges = [Edge(src=r[0], dst=r[1], predicate=r[2], weight=float(r[3]), chunk_ids=list(r[4])) for r in rels]
        return GraphPath(keys=list(keys), names=list(names), edges=edges)

    async def drop(self, tenant: str) -> None:
        """Delete the tenant's graph (no error when it does not exist)."""
        try:
            await self._db.select_graph(self.graph_name(tenant)).delete()
        except redis.exceptions.ConnectionError as exc:
            raise GraphStoreUnavailable(f"FalkorDB at {self.address} is unreachable: {exc}") from exc
        except redis.exceptions.ResponseError as exc:
            if "empty key" not in str(exc):
                raise GraphStoreError(f"FalkorDB could not drop {self.graph_name(tenant)!r}: {exc}") from exc

    async def aclose(self) -> None:
        """Close the connection pool (if one was opened)."""
        if self._db_client is not None:
            await self._db_client.aclose()
            self._db_client = None
