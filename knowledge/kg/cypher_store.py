"""Behaviour both adapters share: the protocol's methods written once over the shared Cypher text.

Adapters supply ``_run`` (one parameterised query, rows back) and the dialect-specific methods
(``setup``, ``entities_fulltext``, ``shortest_path``, ``drop``, ``aclose``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from knowledge.kg import cypher
from knowledge.kg.schema import (
    SYNONYM,
    ChunkRecord,
    Edge,
    EntityHit,
    GraphBatch,
    GraphStats,
    Mention,
    RelationRecord,
    Subgraph,
    check_tenant,
)

Row = list[Any]
"""One result row, columns in RETURN order."""

WRITE_BATCH = 500
"""Rows per UNWIND write."""
_WORD = re.compile(r"\w+", re.UNICODE)


def fulltext_words(words: Sequence[str], *, max_words: int = 16) -> list[str]:
    """Plain word tokens (letters/digits only), so no index query syntax can come from user text."""
    out: list[str] = []
    for w in words:
        for tok in _WORD.findall(w):
            if len(tok) > 1 and tok.lower() not in out:
                out.append(tok.lower())
    return out[:max_words]


class CypherGraphStore(ABC):
    """Base of the two adapters: everything expressed in the shared Cypher text."""

    backend = "cypher"

    @abstractmethod
    async def _run(self, tenant: str, query: str, params: dict[str, Any]) -> list[Row]:
        """Run one parameterised query on the tenant's graph and return its rows."""

    async def write(self, tenant: str, batch: GraphBatch) -> None:
        """Merge chunks, entities, mentions, then relations, in UNWIND batches."""
        check_tenant(tenant)
        steps: list[tuple[str, list[dict[str, Any]]]] = [
            (cypher.UPSERT_CHUNKS, [c.model_dump() for c in batch.chunks]),
            (cypher.MERGE_ENTITIES, [e.model_dump() for e in batch.entities]),
            (cypher.MERGE_MENTIONS, [m.model_dump() for m in batch.mentions]),
            (cypher.MERGE_RELATIONS, [r.model_dump() for r in batch.relations]),
        ]
        for query, rows in steps:
            for i in range(0, len(rows), WRITE_BATCH):
                await self._run(tenant, query, {"tenant": tenant, "rows": rows[i : i + WRITE_BATCH]})

    async def write_synonyms(self, tenant: str, edges: Sequence[RelationRecord]) -> None:
        """Set synonym edges (weight replaced, no source chunks), in UNWIND batches."""
        check_tenant(tenant)
        rows = [e.model_dump() for e in edges]
        for i in range(0, len(rows), WRITE_BATCH):
            await self._run(tenant, cypher.MERGE_SYNONYMS, {"tenant": tenant, "rows": rows[i : i + WRITE_BATCH]})

    async def entity_names(self, tenant: str, *, after: str = "", limit: int = 5000) -> list[tuple[str, str]]:
        """(key, name) of the tenant's entities in key order, the first ``limit`` keys after ``after``."""
        check_tenant(tenant)
        rows = await self._run(tenant, cypher.ENTITY_NAMES, {"tenant": tenant, "after": after, "limit": limit})
        return [(r[0], r[1] or r[0]) for r in rows]

    async def delete_doc(self, tenant: str, doc_id: str) -> None:
        """Drop the document's chunks, prune facts they alone supported, then orphaned entities."""
        check_tenant(tenant)
        rows = await self._run(tenant, cypher.DOC_CHUNK_IDS, {"tenant": tenant, "doc_id": doc_id})
        ids = [r[0] for r in rows]
        if not ids:
            return
        params = {"tenant": tenant, "ids": ids}
        await self._run(tenant, cypher.PRUNE_RELATIONS, params)
        await self._run(tenant, cypher.DELETE_UNSUPPORTED, {"tenant": tenant, "synonym": SYNONYM})
        await self._run(tenant, cypher.DELETE_CHUNKS, params)
        await self._run(tenant, cypher.DELETE_ORPHANS, {"tenant": tenant})

    async def entities_by_key(self, tenant: str, keys: Sequence[str]) -> list[EntityHit]:
        """Exact key lookups, with each entity's mention count."""
        check_tenant(tenant)
        if not keys:
            return []
        rows = await self._run(tenant, cypher.ENTITIES_BY_KEY, {"tenant": tenant, "keys": list(keys)})
        return [EntityHit(key=r[0], name=r[1], type=r[2] or "", degree=int(r[3])) for r in rows]

    async def neighbourhood(self, tenant: str, keys: Sequence[str], *, limit: int = 200) -> Subgraph:
        """RELATED edges touching ``keys``, heaviest first."""
        check_tenant(tenant)
        if not keys:
            return Subgraph()
        rows = await self._run(tenant, cypher.NEIGHBOURHOOD, {"tenant": tenant, "keys": list(keys), "limit": limit})
        edges = [Edge(src=r[0], dst=r[1], predicate=r[2], weight=float(r[3]), chunk_ids=list(r[4])) for r in rows]
        return Subgraph(edges=edges)

    async def mentions(self, tenant: str, keys: Sequence[str], *, per_entity: int = 50, hubs: bool = True) -> Subgraph:
        """MENTIONED_IN edges of ``keys`` and the entities with their mention counts; ``hubs`` False: an entity
        with more than ``per_entity`` mentions gets none and the degree ``per_entity + 1`` (not counted)."""
        check_tenant(tenant)
        if not keys:
            return Subgraph()
        params = {"tenant": tenant, "keys": list(keys), "per_entity": per_entity, "cap": per_entity + 1}
        rows = await self._run(tenant, cypher.MENTIONS if hubs else cypher.MENTIONS_SKIP_HUBS, params)
        sub = Subgraph()
        for key, name, etype, degree, ids in rows:
            sub.entities[key] = EntityHit(key=key, name=name, type=etype or "", degree=int(degree))
            if hubs or len(ids) <= per_entity:
                sub.mentions.extend(Mention(key=key, chunk_id=cid) for cid in ids)
        return sub

    async def chunks(self, tenant: str, ids: Sequence[str]) -> list[ChunkRecord]:
        """Chunk records in the order of ``ids``."""
        check_tenant(tenant)
        if not ids:
            return []
        rows = await self._run(tenant, cypher.CHUNKS_BY_ID, {"tenant": tenant, "ids": list(ids)})
        found = {
            r[0]: ChunkRecord(
                id=r[0],
                doc_id=r[1],
                title=r[2] or "",
                text=r[3] or "",
                source=r[4] or "",
                section_path=list(r[5] or []),
            )
            for r in rows
        }
        return [found[i] for i in ids if i in found]

    async def stats(self, tenant: str) -> GraphStats:
        """Counts of entities, chunks, RELATED and MENTIONED_IN edges."""
        check_tenant(tenant)
        params = {"tenant": tenant}
        counts = []
        for q in (cypher.COUNT_ENTITIES, cypher.COUNT_CHUNKS, cypher.COUNT_RELATIONS, cypher.COUNT_MENTIONS):
            rows = await self._run(tenant, q, params)
            counts.append(int(rows[0][0]) if rows else 0)
        return GraphStats(entities=counts[0], chunks=counts[1], relations=counts[2], mentions=counts[3])
