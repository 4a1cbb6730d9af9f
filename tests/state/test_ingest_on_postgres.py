"""The real ingestor with its document registry in Postgres (selected by ``postgres_url``), over the embedded Qdrant."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.embeddings.local import LocalEmbedder
from knowledge.ingest import Ingestor
from knowledge.models import Document
from knowledge.pg_manifest import PgManifest
from knowledge.settings import Settings
from knowledge.vector_store import open_vector_store

pytestmark = pytest.mark.postgres


def _doc(doc_id: str, text: str) -> Document:
    return Document(id=doc_id, title=doc_id.upper(), text=text, source=f"{doc_id}.md")


def test_ingest_replace_delete_with_the_registry_in_postgres(settings: Settings, pg_url: str, tmp_path: Path) -> None:
    settings = settings.model_copy(update={"postgres_url": pg_url})
    store = open_vector_store(settings)
    ingestor = Ingestor(settings, LocalEmbedder(batch_size=8), store)
    try:
        assert isinstance(ingestor.manifest, PgManifest)
        assert not settings.path("manifest.sqlite").exists()
        first = ingestor.ingest_documents([_doc("a", "Owls hunt mice at night."), _doc("b", "Voles dig.")], "t")
        assert sorted(first.added) == ["a", "b"] and not first.failed
        again = ingestor.ingest_documents([_doc("a", "Owls swallow prey whole."), _doc("b", "Voles dig.")], "t")
        assert again.replaced == ["a"] and again.unchanged == ["b"]
        assert {d.doc_id: d.chunks for d in ingestor.list_documents("t")} == {"a": 1, "b": 1}
        assert store.count("t") == 2
        assert ingestor.delete_document("a", "t")
        assert [d.doc_id for d in ingestor.list_documents("t")] == ["b"] and store.count("t") == 1
    finally:
        ingestor.close()
        store.close()
    # another process (a replica, a worker) reads the same registry
    other = PgManifest.open(pg_url)
    try:
        assert [e.doc_id for e in other.committed("t")] == ["b"]
    finally:
        other.close()
