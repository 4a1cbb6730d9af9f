"""A blocking face for the async ``GraphSink``: the shape ``knowledge.ingest.IngestSink`` expects.

The ingestor calls sinks synchronously (possibly from inside a running event loop), so the graph
sink runs on its own event loop in a background thread, with its own store client made there.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from knowledge.kg.extractor import Extractor
from knowledge.kg.schema import GraphStats
from knowledge.kg.sink import GraphSink
from knowledge.kg.store import GraphStore
from knowledge.kg.synonyms import SynonymLinker
from knowledge.models import Chunk, Document

T = TypeVar("T")


class BlockingGraphSink:
    """``upsert(tenant, doc, chunks)`` / ``delete(tenant, doc_id)`` that block until the graph is written."""

    def __init__(
        self, make_store: Callable[[], GraphStore], extractor: Extractor, *, synonyms: SynonymLinker | None = None
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="graph-sink", daemon=True)
        self._thread.start()
        self._sink = self._call(self._make(make_store, extractor, synonyms))

    @staticmethod
    async def _make(
        make_store: Callable[[], GraphStore], extractor: Extractor, synonyms: SynonymLinker | None
    ) -> GraphSink:
        return GraphSink(make_store(), extractor, synonyms=synonyms)

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop.is_closed():
            coro.close()
            raise RuntimeError("the graph sink is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Replace the document in the graph."""
        self._call(self._sink.upsert(tenant, doc, chunks))

    def delete(self, tenant: str, doc_id: str) -> None:
        """Remove the document from the graph (no error if absent)."""
        self._call(self._sink.delete(tenant, doc_id))

    def finish(self, tenant: str) -> None:
        """After an ingest: link synonyms of the entities it wrote (when configured)."""
        self._call(self._sink.finish(tenant))

    def stats(self, tenant: str) -> GraphStats:
        """Counts of the tenant's graph."""
        return self._call(self._sink.stats(tenant))

    def close(self) -> None:
        """Close the store client and stop the loop thread."""
        if self._loop.is_closed():
            return
        self._call(self._sink.store.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
