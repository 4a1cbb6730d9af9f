"""Fixtures of the ingestion / vector-search tests: the real MiniLM (once per session), the real embedded vector
store of the default engine (Qdrant Edge; ``WAYPOINT_QDRANT_ENGINE=local`` runs them on qdrant-client local mode)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.embeddings import CachedEmbedder, Embedder, EmbeddingCache
from knowledge.embeddings.local import LocalEmbedder
from knowledge.ingest import Ingestor
from knowledge.loaders import iter_corpus
from knowledge.models import Document
from knowledge.settings import Settings
from knowledge.vector_store import VectorStore, open_vector_store

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "passages.jsonl"
"""24 short passages on distinct topics, two of them near-identical part numbers."""


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real packaged all-MiniLM-L6-v2, loaded once per session (uncached)."""
    return LocalEmbedder(batch_size=32)


@pytest.fixture
def cached_embedder(embedder: Embedder, settings: Settings) -> Iterator[CachedEmbedder]:
    """The session model behind a fresh cache in the test's data dir."""
    cache = EmbeddingCache(settings.path("embeddings", "cache.sqlite"))
    yield CachedEmbedder(embedder, cache)
    cache.close()


@pytest.fixture
def store(settings: Settings) -> Iterator[VectorStore]:
    """The real embedded vector store (the configured engine) in the test's data dir."""
    s = open_vector_store(settings)
    yield s
    s.close()


@pytest.fixture
def ingestor(settings: Settings, cached_embedder: CachedEmbedder, store: VectorStore) -> Iterator[Ingestor]:
    """An ingestor over the real model and the real local store."""
    ing = Ingestor(settings, cached_embedder, store)
    yield ing
    ing.close()


@pytest.fixture(scope="session")
def corpus_path() -> Path:
    """The small test corpus file."""
    return CORPUS


@pytest.fixture(scope="session")
def corpus_docs() -> list[Document]:
    """The small test corpus as documents."""
    docs = [d for d in iter_corpus(CORPUS, 10_000) if isinstance(d, Document)]
    assert len(docs) == 24
    return docs
