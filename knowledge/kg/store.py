"""The ``GraphStore`` protocol both adapters implement, and its typed errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from knowledge.errors import BackendUnavailableError
from knowledge.kg.schema import (
    ChunkRecord,
    EntityHit,
    GraphBatch,
    GraphPath,
    GraphStats,
    RelationRecord,
    Subgraph,
)


class GraphStoreError(Exception):
    """The graph store failed: it is down, refused a query or returned something unusable."""


class GraphStoreUnavailable(GraphStoreError, BackendUnavailableError):
    """The graph store cannot be reached (not started, connection refused, timed out)."""


@runtime_checkable
class GraphStore(Protocol):
    """A tenant-isolated knowledge graph. Every method takes the tenant id first."""

    backend: str
    """``falkordb`` or ``neo4j``."""

    async def setup(self, tenant: str) -> None:
        """Create the tenant's constraints and indexes (idempotent)."""
        ...

    async def write(self, tenant: str, batch: GraphBatch) -> None:
        """Merge a batch: chunks, entities, mentions, then relations (chunk ids unioned, weights added)."""
        ...

    async def write_synonyms(self, tenant: str, edges: Sequence[RelationRecord]) -> None:
        """Set synonym RELATED edges between existing entities (weight replaced, not added)."""
        ...

    async def entity_names(self, tenant: str, *, after: str = "", limit: int = 5000) -> list[tuple[str, str]]:
        """(key, name) of the tenant's entities in key order: the first ``limit`` keys after ``after``."""
        ...

    async def delete_doc(self, tenant: str, doc_id: str) -> None:
        """Forget a document: its chunks, the facts only it supported, and entities left unmentioned."""
        ...

    async def entities_by_key(self, tenant: str, keys: Sequence[str]) -> list[EntityHit]:
        """Entities whose key is one of ``keys``."""
        ...

    async def entities_fulltext(self, tenant: str, words: Sequence[str], limit: int = 10) -> list[EntityHit]:
        """Entities whose name matches any of ``words`` in the full-text index, best first."""
        ...

    async def neighbourhood(self, tenant: str, keys: Sequence[str], *, limit: int = 200) -> Subgraph:
        """The entities one RELATED hop from ``keys`` (either direction), the edges, and their mentions."""
        ...

    async def mentions(self, tenant: str, keys: Sequence[str], *, per_entity: int = 50, hubs: bool = True) -> Subgraph:
        """The MENTIONED_IN edges of ``keys`` (at most ``per_entity`` each) and the entities with degrees.
        ``hubs`` False: an entity mentioned in more than ``per_entity`` chunks keeps no mentions and its degree is
        ``per_entity + 1`` (a hub's mentions are neither read nor counted)."""
        ...

    async def chunks(self, tenant: str, ids: Sequence[str]) -> list[ChunkRecord]:
        """Chunk records by id (missing ids are skipped)."""
        ...

    async def shortest_path(self, tenant: str, src: str, dst: str, *, max_hops: int = 4) -> GraphPath | None:
        """A shortest RELATED path between two entity keys, ignoring direction; None when there is none."""
        ...

    async def stats(self, tenant: str) -> GraphStats:
        """Node and edge counts of the tenant's graph."""
        ...

    async def drop(self, tenant: str) -> None:
        """Delete the tenant's whole graph."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
