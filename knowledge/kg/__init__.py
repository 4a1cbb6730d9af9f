"""Knowledge graph: schema, the GraphStore protocol and its adapters, extraction, resolution, the ingest sink.

Import adapters from their modules (``knowledge.kg.falkordb_store``, ``knowledge.kg.neo4j_store``)
or build the configured one with ``knowledge.kg.factory.open_graph(settings)``.
"""

from knowledge.kg.extractor import ExtractionError, Extractor
from knowledge.kg.fast_extractor import FastExtractor
from knowledge.kg.resolve import Resolver, normalize, title_key
from knowledge.kg.schema import (
    ChunkRecord,
    Edge,
    EntityHit,
    EntityRecord,
    ExtractedEntity,
    Extraction,
    GraphBatch,
    GraphInputError,
    GraphPath,
    GraphStats,
    Mention,
    RelationRecord,
    Subgraph,
    Triple,
)
from knowledge.kg.sink import GraphSink
from knowledge.kg.store import GraphStore, GraphStoreError, GraphStoreUnavailable

__all__ = [
    "ChunkRecord",
    "Edge",
    "EntityHit",
    "EntityRecord",
    "ExtractedEntity",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "FastExtractor",
    "GraphBatch",
    "GraphInputError",
    "GraphPath",
    "GraphSink",
    "GraphStats",
    "GraphStore",
    "GraphStoreError",
    "GraphStoreUnavailable",
    "Mention",
    "RelationRecord",
    "Resolver",
    "Subgraph",
    "Triple",
    "normalize",
    "title_key",
]
