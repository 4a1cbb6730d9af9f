"""Graph schema: the records extractors produce and stores persist, and the allow-listed names.

Nodes: ``(:Entity {tenant, key, name, type, aliases})`` and ``(:Chunk {tenant, id, doc_id, title, text})``.
Edges: ``(:Entity)-[:MENTIONED_IN]->(:Chunk)`` and ``(:Entity)-[:RELATED {predicate, weight, chunk_ids}]->(:Entity)``.
Every fact keeps the chunk ids it was read from.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from knowledge.errors import BadInputError

ENTITY: Final = "Entity"
"""Label of entity nodes (the only entity label; types are a property)."""
CHUNK: Final = "Chunk"
"""Label of chunk nodes."""
MENTIONED_IN: Final = "MENTIONED_IN"
"""Entity -> chunk edge type."""
RELATED: Final = "RELATED"
"""Entity -> entity edge type; the predicate is a property."""
LABELS: Final = frozenset({ENTITY, CHUNK})
"""Every node label a query may name."""
REL_TYPES: Final = frozenset({MENTIONED_IN, RELATED})
"""Every relationship type a query may name."""

SYNONYM: Final = "synonym"
"""Predicate of a RELATED edge between two entity names the embedder finds alike (no source chunk: it stays
until one of its entities goes)."""
MAX_KEY_LENGTH: Final = 256
"""Longest entity key, in characters (names themselves may be any length)."""

_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class GraphInputError(BadInputError):
    """Input the graph layer refuses (a bad tenant id, an empty entity key)."""


def check_tenant(tenant: str) -> str:
    """Return ``tenant`` if it is an allowed tenant id (letters, digits, ``_``, ``-``; 1-64 chars), else raise."""
    if not _TENANT.match(tenant):
        raise GraphInputError(f"tenant id {tenant!r} is not allowed: use 1-64 letters, digits, '_' or '-'")
    return tenant


class ExtractedEntity(BaseModel):
    """An entity as an extractor saw it in one chunk."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    """Surface form, as written."""
    type: str = "concept"
    """Coarse type: ``title``, ``name``, ``concept`` (fast extractor) or whatever the LLM said."""


class Triple(BaseModel):
    """A (subject, predicate, object) fact read from one chunk."""

    model_config = ConfigDict(frozen=True)

    subject: str = Field(min_length=1)
    """Subject entity name."""
    predicate: str = Field(min_length=1)
    """Relation, short and lower-case (``directed``, ``born in``, ``co_occurs``)."""
    object: str = Field(min_length=1)
    """Object entity name."""
    weight: float = 1.0
    """Strength of the evidence for the fact (co-occurrence counts, 1.0 for a stated fact)."""


class Extraction(BaseModel):
    """What an extractor read from one chunk: one output format for every extractor."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    """The chunk it was read from."""
    entities: list[ExtractedEntity] = Field(default_factory=list)
    """Entities mentioned in the chunk."""
    triples: list[Triple] = Field(default_factory=list)
    """Facts stated (or co-occurrences seen) in the chunk."""


class EntityRecord(BaseModel):
    """A resolved entity, ready to be merged into a store."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(min_length=1, max_length=MAX_KEY_LENGTH)
    """Normalised key, unique per tenant (bounded: FalkorDB 4.x crashes enforcing uniqueness on ~5 KB keys)."""
    name: str
    """Display name (the first surface form seen)."""
    type: str = "concept"
    """Coarse type."""
    aliases: list[str] = Field(default_factory=list)
    """Other surface forms that resolved to this key."""


class ChunkRecord(BaseModel):
    """A chunk as the graph keeps it (text included, so the graph tool can return Evidence alone)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1, max_length=MAX_KEY_LENGTH)
    """Chunk id (same as the vector store's; bounded like keys, since it is indexed)."""
    doc_id: str = Field(min_length=1, max_length=MAX_KEY_LENGTH)
    """Owning document id."""
    title: str = ""
    """Document title."""
    text: str = ""
    """Chunk text."""
    source: str = ""
    """Document source."""
    section_path: list[str] = Field(default_factory=list)
    """Headings down to the chunk (empty for a passage, or a chunk a graph written before this field holds)."""


class RelationRecord(BaseModel):
    """A resolved fact between two entity keys, with the chunks it came from."""

    model_config = ConfigDict(frozen=True)

    src: str
    """Subject entity key."""
    dst: str
    """Object entity key."""
    predicate: str
    """Relation name."""
    weight: float = 1.0
    """Accumulated evidence weight."""
    chunk_ids: list[str] = Field(default_factory=list)
    """Chunks the fact was read from."""


class Mention(BaseModel):
    """Entity ``key`` is mentioned in chunk ``chunk_id``."""

    model_config = ConfigDict(frozen=True)

    key: str
    chunk_id: str


class GraphBatch(BaseModel):
    """One write: chunks, entities, mentions and relations (merged in that order)."""

    chunks: list[ChunkRecord] = Field(default_factory=list)
    """Chunk nodes to upsert."""
    entities: list[EntityRecord] = Field(default_factory=list)
    """Entity nodes to merge."""
    mentions: list[Mention] = Field(default_factory=list)
    """MENTIONED_IN edges to merge."""
    relations: list[RelationRecord] = Field(default_factory=list)
    """RELATED edges to merge (chunk ids unioned, weights added)."""


class Edge(BaseModel):
    """A RELATED edge as read back from a store."""

    model_config = ConfigDict(frozen=True)

    src: str
    dst: str
    predicate: str
    weight: float
    chunk_ids: list[str]


class EntityHit(BaseModel):
    """An entity found by key or full-text lookup."""

    model_config = ConfigDict(frozen=True)

    key: str
    name: str
    type: str
    score: float = 1.0
    """Lookup score (1.0 for an exact key match, the index score for full-text)."""
    degree: int = 0
    """Number of chunks that mention the entity (hubs get down-weighted)."""


class Subgraph(BaseModel):
    """A neighbourhood: entities, the RELATED edges among them, and the chunks they are mentioned in."""

    entities: dict[str, EntityHit] = Field(default_factory=dict)
    """Entities by key."""
    edges: list[Edge] = Field(default_factory=list)
    """RELATED edges."""
    mentions: list[Mention] = Field(default_factory=list)
    """MENTIONED_IN edges."""


class GraphPath(BaseModel):
    """A path between two entities: names along it and the facts (edges) that connect them."""

    model_config = ConfigDict(frozen=True)

    keys: list[str]
    """Entity keys, from start to end."""
    names: list[str]
    """Entity display names, in the same order."""
    edges: list[Edge]
    """Edges along the path (in either direction)."""


class GraphStats(BaseModel):
    """Counts for one tenant's graph."""

    model_config = ConfigDict(frozen=True)

    entities: int
    chunks: int
    relations: int
    mentions: int
