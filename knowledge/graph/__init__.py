"""Knowledge graph: schema, the GraphStore protocol and its adapters, extraction, resolution, the ingest sink.

Import adapters from their modules (``knowledge.graph.falkordb_store``, ``knowledge.graph.neo4j_store``)
or build the configured one with ``knowledge.graph.factory.open_graph(settings)``.
"""

from knowledge.graph.extractor import ExtractionError, Extractor
from knowledge.graph.fast_extractor import FastExtractor
from knowledge.graph.resolve import Resolver, normalize, title_key
from knowledge.graph.schema import (
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
from knowledge.graph.sink import GraphSink
from knowledge.graph.store import GraphStore, GraphStoreError, GraphStoreUnavailable

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
