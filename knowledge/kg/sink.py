"""The ingestion sink: builds the graph from the same chunks the vector store gets."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.kg.extractor import Extractor
from knowledge.kg.resolve import Resolver
from knowledge.kg.schema import ChunkRecord, GraphStats
from knowledge.kg.store import GraphStore
from knowledge.kg.synonyms import SynonymLinker
from knowledge.models import Chunk, Document

EXTRACT_BATCH = 16
"""Chunks handed to the extractor at once (the LLM extractor batches them in its prompts)."""


class GraphSink:
    """``upsert(tenant, doc, chunks)`` / ``delete(tenant, doc_id)``: the hook the ingestor calls per document."""

    def __init__(
        self,
        store: GraphStore,
        extractor: Extractor,
        resolver: Resolver | None = None,
        *,
        synonyms: SynonymLinker | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor
        self.resolver = resolver or Resolver()
        self.synonyms = synonyms
        self._ready: set[str] = set()
        self._touched: dict[str, set[str]] = {}
        """Entity keys written per tenant since its last ``finish`` (only kept when synonyms are linked)."""

    async def _setup(self, tenant: str) -> None:
        if tenant not in self._ready:
            await self.store.setup(tenant)
            self._ready.add(tenant)

    async def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Replace the document's part of the graph with what its chunks say."""
        await self._setup(tenant)
        self.extractor.observe_titles([doc.title])
        await self.store.delete_doc(tenant, doc.id)
        for i in range(0, len(chunks), EXTRACT_BATCH):
            part = chunks[i : i + EXTRACT_BATCH]
            batch = self.resolver.resolve(await self.extractor.extract(part))
            batch.chunks = [
                ChunkRecord(
                    id=c.id, doc_id=c.doc_id, title=c.title, text=c.text, source=c.source, section_path=c.section_path
                )
                for c in part
            ]
            await self.store.write(tenant, batch)
            if self.synonyms is not None:
                self._touched.setdefault(tenant, set()).update(e.key for e in batch.entities)

    async def finish(self, tenant: str) -> int:
        """After an ingest: link the entities it wrote to their synonyms (when configured); edges written."""
        touched = self._touched.pop(tenant, set())
        if self.synonyms is None or not touched:
            return 0
        try:
            return await self.synonyms.link(self.store, tenant, touched)
        except BaseException:
            self._touched.setdefault(tenant, set()).update(touched)  # tried again after the next ingest
            raise

    async def delete(self, tenant: str, doc_id: str) -> None:
        """Remove the document from the graph."""
        await self._setup(tenant)
        await self.store.delete_doc(tenant, doc_id)

    async def stats(self, tenant: str) -> GraphStats:
        """Counts of the tenant's graph."""
        return await self.store.stats(tenant)
