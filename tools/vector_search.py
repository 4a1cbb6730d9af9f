"""The ``vector_search`` tool: hybrid (dense + BM25 sparse, RRF-fused) search over a tenant's chunks.

Also usable outside Waypoint as a LangChain retriever: ``VectorSearchRetriever(tool=VectorSearchTool(...))``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from knowledge.chunking import embedding_text
from knowledge.embeddings import Embedder, EmbeddingError
from knowledge.models import Chunk, Evidence
from knowledge.sparse import BM25Encoder, tokenize
from knowledge.vector_store import Hit, SearchMode, VectorStore, VectorStoreError
from tools.base import ToolError

DESCRIPTION = (
    "Search the document collection by meaning and by exact words at once (dense embeddings fused with "
    "BM25 keyword matching). Best for: finding passages about a named person, place, work or event; exact "
    "codes, numbers and rare names; questions answerable from one or two passages. Give a short, specific "
    "query (the entity and the fact wanted), not a whole multi-part question. Returns ranked passages with "
    "their document title."
)
_MODES: tuple[SearchMode, ...] = ("hybrid", "dense", "sparse")
TOGETHER_K = 10
"""Passages ``most_together`` reads."""


class VectorSearchTool:
    """``RetrievalTool`` over a ``VectorStore``: embeds the query, searches one tenant, returns ``Evidence``."""

    name = "vector_search"
    description = DESCRIPTION

    def __init__(self, embedder: Embedder, store: VectorStore, tenant: str, *, encoder: BM25Encoder | None = None):
        self.embedder = embedder
        self.store = store
        self.tenant = tenant
        self.encoder = encoder or BM25Encoder()

    async def search(
        self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None, mode: SearchMode = "hybrid"
    ) -> list[Evidence]:
        """Up to ``k`` passages for ``query``, best first (filters: ``doc_id``, ``source``, ``title``, ``chunk_id``)."""
        return await asyncio.to_thread(self.search_sync, query, k=k, filters=filters, mode=mode)

    def search_sync(
        self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None, mode: SearchMode = "hybrid"
    ) -> list[Evidence]:
        """The blocking search behind ``search``."""
        if not query.strip():
            raise ToolError("vector_search needs a non-empty query")
        if mode not in _MODES:
            raise ToolError(f"unknown search mode {mode!r}; use one of {list(_MODES)!r}")
        if k < 1:
            raise ToolError(f"k must be at least 1, got {k}")
        try:
            dense = self.embedder.embed([query])[0] if mode != "sparse" else None
            sparse = self.encoder.encode_query(query) if mode != "dense" else None
            hits = self.store.search(self.tenant, dense=dense, sparse=sparse, mode=mode, k=k, filters=filters)
        except (EmbeddingError, VectorStoreError) as exc:
            raise ToolError(f"vector_search failed: {exc}") from exc
        return [_evidence(hit, rank, mode) for rank, hit in enumerate(hits, start=1)]

    async def missing_words(self, words: Sequence[str]) -> set[str]:
        """The ``words`` no live passage contains: one BM25 lookup each (a sparse search for the word alone finds
        only passages that hold it). Stop words and empty words are never missing."""
        return await asyncio.to_thread(self.missing_words_sync, words)

    def missing_words_sync(self, words: Sequence[str]) -> set[str]:
        """The blocking lookups behind ``missing_words``."""
        missing = set()
        try:
            for word in dict.fromkeys(words):
                sparse = self.encoder.encode_query(word)
                if sparse and not self.store.search(self.tenant, dense=None, sparse=sparse, mode="sparse", k=1):
                    missing.add(word)
        except VectorStoreError as exc:
            raise ToolError(f"vector_search failed: {exc}") from exc
        return missing

    async def document_passages(self, doc_id: str) -> int:
        """How many live passages (chunks) of ``doc_id`` the tenant holds: one exact count, filtered on the id."""
        return await asyncio.to_thread(self.document_passages_sync, doc_id)

    def document_passages_sync(self, doc_id: str) -> int:
        """The blocking count behind ``document_passages``."""
        try:
            return self.store.count(self.tenant, live=True, doc_id=doc_id)
        except VectorStoreError as exc:
            raise ToolError(f"vector_search failed: {exc}") from exc

    async def most_together(self, words: Sequence[str]) -> int:
        """The most of ``words`` one live passage holds, among the ``TOGETHER_K`` best BM25 matches of them all (a
        passage holding them all outscores one holding some)."""
        return await asyncio.to_thread(self.most_together_sync, words)

    def most_together_sync(self, words: Sequence[str]) -> int:
        """The blocking search behind ``most_together``."""
        wanted = set(words)
        sparse = self.encoder.encode_query(" ".join(wanted))
        if not sparse:
            return 0
        try:
            hits = self.store.search(self.tenant, dense=None, sparse=sparse, mode="sparse", k=TOGETHER_K)
        except VectorStoreError as exc:
            raise ToolError(f"vector_search failed: {exc}") from exc
        indexed = (embedding_text(Chunk.model_validate(h.payload)) for h in hits)  # what each BM25 vector was made of
        return max((len(wanted & set(tokenize(text))) for text in indexed), default=0)


def _evidence(hit: Hit, rank: int, mode: SearchMode) -> Evidence:
    p = hit.payload
    how = {"hybrid": "RRF of dense and BM25 ranks", "dense": "embedding similarity", "sparse": "BM25"}[mode]
    chunk_id = str(p.get("chunk_id", hit.id))
    return Evidence(
        id=chunk_id,
        doc_id=str(p.get("doc_id", "")),
        text=str(p.get("text", "")),
        title=str(p.get("title", "")),
        section_path=[str(s) for s in p.get("section_path", [])],
        score=hit.score,
        tool=VectorSearchTool.name,
        reason=f"{mode} rank {rank} ({how}, score {hit.score:.4f})",
        source=str(p.get("source", "")),
        source_ids=[chunk_id],
    )


class VectorSearchRetriever(BaseRetriever):
    """LangChain retriever over ``VectorSearchTool``; metadata carries the evidence fields."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: VectorSearchTool
    """The tool doing the search."""
    k: int = 5
    """Passages per query."""
    mode: SearchMode = "hybrid"
    """Search mode."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[LCDocument]:
        return [_lc(e) for e in self.tool.search_sync(query, k=self.k, mode=self.mode)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[LCDocument]:
        return [_lc(e) for e in await self.tool.search(query, k=self.k, mode=self.mode)]


def _lc(e: Evidence) -> LCDocument:
    return LCDocument(page_content=e.text, metadata=e.model_dump(exclude={"text"}), id=e.id)
