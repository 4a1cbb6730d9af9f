"""The tree sink inside the real ingestion pipeline (packaged MiniLM, the embedded Qdrant)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_support import MANUAL

from knowledge.embeddings.local import LocalEmbedder
from knowledge.ingest import Ingestor
from knowledge.settings import Settings
from knowledge.trees import build_tree_sink
from knowledge.vector_store import open_vector_store

pytestmark = pytest.mark.integration  # real embedding model, Qdrant and FalkorDB (or a child process)


def test_ingest_builds_replaces_and_deletes_trees(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "manual.md"
    path.write_text(MANUAL)
    sink, trees = build_tree_sink(settings)
    vectors = open_vector_store(settings)
    ingestor = Ingestor(settings, LocalEmbedder(batch_size=32), vectors, sinks=[sink])
    try:
        report = ingestor.ingest_paths([path], "t")
        (doc_id,) = report.added
        tree = trees.tree("t", doc_id)
        assert tree is not None and "Replacing the seal" in [n.title for n in tree.nodes]
        seal = next(n for n in tree.nodes if n.title == "Replacing the seal")
        assert trees.chunk_ids("t", doc_id, seal.start, seal.end)  # the sink kept the chunk spans

        path.write_text(MANUAL.replace("### Replacing the seal", "### Changing the seal"))
        assert ingestor.ingest_paths([path], "t").replaced == [doc_id]
        titles = [n.title for n in trees.tree("t", doc_id).nodes]  # type: ignore[union-attr]
        assert "Changing the seal" in titles and "Replacing the seal" not in titles

        assert ingestor.delete_document(doc_id, "t")
        assert trees.tree("t", doc_id) is None and trees.find_docs("t", "seal", 5) == []
    finally:
        ingestor.close()
        vectors.close()
        trees.close()
