"""The secondary indexes every ingest feeds besides Qdrant: the knowledge graph and the document trees.

``open_indexes(settings)`` starts (or connects to) the graph store once and opens the tree store;
its ``sinks`` go to ``Ingestor(..., sinks=...)`` so that one ingest, replace or delete keeps the
vector store, the graph and the trees in step. The graph uses the fast extractor (no LLM), the
default on CPU; LLM extraction is ``waypoint graph build --extractor llm``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from knowledge.embeddings.base import Embedder
from knowledge.ingest import IngestSink
from knowledge.kg.blocking import BlockingGraphSink
from knowledge.kg.factory import GraphRuntime, open_graph
from knowledge.kg.fast_extractor import FastExtractor
from knowledge.kg.store import GraphStoreError
from knowledge.kg.synonyms import SynonymLinker
from knowledge.settings import Settings
from knowledge.trees import TreeStore
from knowledge.trees.sink import build_tree_sink

log = logging.getLogger(__name__)


@dataclass
class Indexes:
    """The graph runtime (None when it could not start), the tree store, and the ingest sinks over both."""

    graph: GraphRuntime | None
    trees: TreeStore
    sinks: list[IngestSink] = field(default_factory=list)


@contextmanager
def open_indexes(
    settings: Settings, *, graph: bool = True, tree_sink: bool = True, embedder: Embedder | None = None
) -> Iterator[Indexes]:
    """Open the graph (unless ``graph=False``) and tree indexes; a graph store that fails to start is
    logged and left out, so vector and tree retrieval still work. ``tree_sink=False`` keeps the tree
    store open (for search) but leaves it out of ``sinks``, so an ingest does not build trees.
    ``embedder``: embeds entity names when ``graph.synonyms`` is on."""
    with ExitStack() as stack:
        sinks: list[IngestSink] = []
        runtime: GraphRuntime | None = None
        if graph:
            try:
                runtime = open_graph(settings)
            except (GraphStoreError, OSError, RuntimeError) as exc:
                log.warning("knowledge graph unavailable, continuing without it: %s", exc)
        if runtime is not None:
            rt = runtime
            stack.callback(lambda: rt.server.stop() if rt.server is not None else None)
            graph_sink = BlockingGraphSink(rt.make_store, FastExtractor(), synonyms=_synonyms(settings, embedder))
            stack.callback(graph_sink.close)
            sinks.append(graph_sink)
        sink, trees = build_tree_sink(settings)
        stack.callback(trees.close)
        if tree_sink:
            sinks.append(sink)
        yield Indexes(graph=runtime, trees=trees, sinks=sinks)


def _synonyms(settings: Settings, embedder: Embedder | None) -> SynonymLinker | None:
    cfg = settings.graph
    if not cfg.synonyms:
        return None
    if embedder is None:
        log.warning("graph.synonyms is on but no embedder was given: no synonym edges are linked")
        return None
    return SynonymLinker(embedder, threshold=cfg.synonym_threshold, max_per_entity=cfg.synonym_max_per_entity)
