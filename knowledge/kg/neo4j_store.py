"""Neo4j adapter (production): the official ``neo4j`` 6.x async driver over Bolt.

Tenants share one database and are isolated by the ``tenant`` property on every node: the
uniqueness constraints are on ``(tenant, key)`` / ``(tenant, id)`` and every shared query matches on
``tenant``. (Database-per-tenant needs Enterprise; set ``neo4j.database`` per deployment if you have it.)
Dialect differences live here: ``IF NOT EXISTS`` DDL, the named Lucene full-text index, undirected
``shortestPath``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import AsyncDriver, AsyncGraphDatabase
from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

from knowledge.kg.cypher_store import CypherGraphStore, Row, fulltext_words
from knowledge.kg.schema import Edge, EntityHit, GraphPath, check_tenant
from knowledge.kg.store import GraphStoreError, GraphStoreUnavailable

SETUP = (
    "CREATE CONSTRAINT waypoint_entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.tenant, e.key) IS UNIQUE",
    "CREATE CONSTRAINT waypoint_chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE (c.tenant, c.id) IS UNIQUE",
    "CREATE INDEX waypoint_chunk_doc IF NOT EXISTS FOR (c:Chunk) ON (c.tenant, c.doc_id)",
    "CREATE FULLTEXT INDEX waypoint_entity_names IF NOT EXISTS FOR (e:Entity) ON EACH [e.name]",
)

FULLTEXT_QUERY = """
CALL db.index.fulltext.queryNodes('waypoint_entity_names', $q) YIELD node, score
WITH node, score WHERE node.tenant = $tenant
RETURN node.key, node.name, node.type, score ORDER BY score DESC LIMIT $limit
"""

SHORTEST_PATH = """
MATCH (a:Entity {tenant: $tenant, key: $src}), (b:Entity {tenant: $tenant, key: $dst})
MATCH p = shortestPath((a)-[:RELATED*..%d]-(b))
RETURN [n IN nodes(p) | n.key], [n IN nodes(p) | n.name],
       [r IN relationships(p) | [startNode(r).key, endNode(r).key, r.predicate, r.weight, r.chunk_ids]]
"""
MAX_HOPS = 8
"""Upper bound for path length (Neo4j needs it as a literal; it comes from this int, never from text)."""


class Neo4jStore(CypherGraphStore):
    """Neo4j 5 graph store over Bolt."""

    backend = "neo4j"

    def __init__(self, uri: str, *, user: str, password: str | None, database: str = "neo4j") -> None:
        self._driver: AsyncDriver = AsyncGraphDatabase.driver(uri, auth=(user, password or ""))
        self._database = database
        self.address = uri

    async def _query(self, query: str, params: dict[str, Any]) -> list[Row]:
        try:
            result = await self._driver.execute_query(query, params, database_=self._database)
        except (ServiceUnavailable, SessionExpired, OSError) as exc:
            raise GraphStoreUnavailable(f"Neo4j at {self.address} is unreachable: {exc}") from exc
        except (Neo4jError, DriverError) as exc:
            raise GraphStoreError(f"Neo4j refused a query: {exc}") from exc
        return [list(rec.values()) for rec in result.records]

    async def _run(self, tenant: str, query: str, params: dict[str, Any]) -> list[Row]:
        check_tenant(tenant)
        return await self._query(query, params)

    async def setup(self, tenant: str) -> None:
        """Constraints and indexes (shared by all tenants; idempotent)."""
        check_tenant(tenant)
        for ddl in SETUP:
            await self._query(ddl, {})
        await self._query("CALL db.awaitIndexes(60)", {})

    async def entities_fulltext(self, tenant: str, words: Sequence[str], limit: int = 10) -> list[EntityHit]:
        """Lucene full-text over entity names: the words OR-ed, filtered to the tenant."""
        toks = fulltext_words(words)
        if not toks:
            return []
        params = {"tenant": tenant, "q": " OR ".join(toks), "limit": limit}
        rows = await self._run(tenant, FULLTEXT_QUERY, params)
        return [EntityHit(key=r[0], name=r[1], type=r[2] or "", score=float(r[3])) for r in rows]

    async def shortest_path(self, tenant: str, src: str, dst: str, *, max_hops: int = 4) -> GraphPath | None:
        """Undirected ``shortestPath`` over RELATED edges."""
        hops = max(1, min(int(max_hops), MAX_HOPS))
        rows = await self._run(tenant, SHORTEST_PATH % hops, {"tenant": tenant, "src": src, "dst": dst})
        if not rows:
            return None
        keys, names, rels = rows[0]
        edges = [Edge(src=r[0], dst=r[1], predicate=r[2], weight=float(r[3]), chunk_ids=list(r[4])) for r in rels]
        return GraphPath(keys=list(keys), names=list(names), edges=edges)

    async def drop(self, tenant: str) -> None:
        """Delete the tenant's nodes and edges."""
        await self._run(tenant, "MATCH (n {tenant: $tenant}) DETACH DELETE n", {"tenant": tenant})

    async def aclose(self) -> None:
        """Close the driver."""
        await self._driver.close()
