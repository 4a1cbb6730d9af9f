"""The same ingest + hybrid search against a Qdrant server; runs only when ``WAYPOINT_QDRANT_URL`` is set."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from knowledge.embeddings import Embedder
from knowledge.ingest import Ingestor
from knowledge.settings import QdrantConfig, Settings
from knowledge.vector_store import open_vector_store
from tools.vector_search import VectorSearchTool

pytestmark = [
    pytest.mark.qdrant_server,
    pytest.mark.skipif(not os.environ.get("WAYPOINT_QDRANT_URL"), reason="needs WAYPOINT_QDRANT_URL"),
]


async def test_server_ingest_search_replace_delete(tmp_path: Path, embedder: Embedder, corpus_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(url=os.environ["WAYPOINT_QDRANT_URL"]))
    store = open_vector_store(settings)
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    ing = Ingestor(settings, embedder, store)
    try:
        assert len(ing.ingest_corpus(corpus_path, tenant).added) == 24
        assert len(ing.ingest_corpus(corpus_path, tenant).unchanged) == 24
        tool = VectorSearchTool(embedder, store, tenant)
        assert (await tool.search("XK-4471", k=1))[0].doc_id == "p06"
        assert (await tool.search("deepest lake", k=1, mode="dense"))[0].doc_id == "p05"
        assert ing.delete_document("p06", tenant)
        assert "p06" not in {e.doc_id for e in await tool.search("XK-4471", k=5)}
        assert store.count(tenant) == 23
    finally:
        store.drop_tenant(tenant)
        ing.close()
        store.close()
