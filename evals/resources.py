"""Lazily opened, shared eval resources: the dataset's isolated tenant (ingested once) and the run ``Deps``."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from typing import Any

from agents.llm import CallOptions, Completion, LLMBackend, LLMUnavailableError, Message
from evals.datasets import Dataset
from graphs.deps import Deps, open_deps
from graphs.trace_store import TraceStore
from knowledge.settings import Settings

log = logging.getLogger(__name__)


def tenant_for(dataset: Dataset) -> str:
    """The isolated tenant of a dataset's corpus: its name plus 12 hex of the corpus hash."""
    safe = re.sub(r"[^a-z0-9]+", "-", dataset.name.lower()).strip("-") or "dataset"
    return f"eval-{safe}-{dataset.corpus_hash[:12]}"


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _close(obj: Any) -> None:
    closer = getattr(obj, "aclose", None) or getattr(obj, "close", None)
    if closer is not None:
        await _maybe_await(closer())


def _merge(reports: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for raw in reports:
        for key, value in raw.items():
            count = len(value) if isinstance(value, list) else value
            merged[key] = merged.get(key, 0) + count if isinstance(count, int | float) else count
    return merged


async def ingest_corpus(settings: Settings, dataset: Dataset, tenant: str) -> dict[str, Any]:
    """Ingest the corpus and the ``docs/`` documents into ``tenant`` (vectors, graph, trees); the ingest report."""
    from evals.documents import load_documents
    from knowledge.embeddings import build_embedder
    from knowledge.indexes import open_indexes
    from knowledge.ingest import Ingestor
    from knowledge.vector_store import open_vector_store

    docs = load_documents(dataset, settings.ingest) if dataset.doc_files else []
    embedder = build_embedder(settings)
    store = open_vector_store(settings)
    reports: list[Any] = []
    try:
        with open_indexes(settings) as indexes:
            ingestor = Ingestor(settings, embedder, store, sinks=indexes.sinks)
            try:
                if dataset.corpus_path is not None:
                    reports.append(await asyncio.to_thread(ingestor.ingest_corpus, dataset.corpus_path, tenant))
                if docs:
                    reports.append(await asyncio.to_thread(ingestor.ingest_documents, docs, tenant))
            finally:
                ingestor.close()
    finally:
        for obj in (store, embedder):
            await _close(obj)
    raws: list[dict[str, Any]] = []
    for report in reports:
        dump = getattr(report, "model_dump", None)
        raws.append(dict(dump(mode="json")) if callable(dump) else {"report": repr(report)})
    merged = _merge(raws)
    if merged.get("failed"):
        log.warning("ingestion of %s failed for %d inputs", dataset.name, merged["failed"])
    return merged


class NoLLM:
    """The LLM of a retrieval-only eval: any call is a bug, so it fails loudly instead of starting a model."""

    model_name = "none"

    async def stream(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> AsyncIterator[Any]:
        """Refuse."""
        raise LLMUnavailableError("this eval runs retrieval only; no LLM was started")
        yield  # pragma: no cover  (makes this an async generator)

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        """Refuse."""
        raise LLMUnavailableError("this eval runs retrieval only; no LLM was started")

    async def health(self) -> bool:
        """Never healthy."""
        return False

    async def aclose(self) -> None:
        """Nothing to close."""


class EvalResources:
    """Opens the tenant and Deps on first use, shares them between strategies, closes them once."""

    def __init__(
        self, settings: Settings, dataset: Dataset, *, llm: LLMBackend | None = None, needs_llm: bool = True
    ) -> None:
        self.settings = settings
        self.dataset = dataset
        self.tenant = tenant_for(dataset)
        self._llm: LLMBackend | None = llm if llm is not None or needs_llm else NoLLM()
        self._stack = AsyncExitStack()
        self._deps: Deps | None = None
        self._traces: TraceStore | None = None

    async def ensure_ingested(self) -> None:
        """Ingest the corpus into the tenant unless a marker says this exact corpus is already there."""
        marker = self.settings.path("evals", "tenants", f"{self.tenant}.json")
        if marker.exists():
            return
        log.info("ingesting %s into tenant %r", self.dataset.name, self.tenant)
        try:
            report = await ingest_corpus(self.settings, self.dataset, self.tenant)
        except ModuleNotFoundError as exc:
            log.warning("corpus not ingested, ingestion is not available: %s", exc)
            return
        where = {"corpus": str(self.dataset.corpus_path), "docs": str(self.dataset.docs_dir)}
        marker.write_text(json.dumps({**where, "report": report}, indent=1))

    async def deps(self) -> Deps:
        """The run Deps (LLM + tools over the eval tenant), ingesting the corpus first."""
        if self._deps is None:
            await self.ensure_ingested()
            self._deps = await self._stack.enter_async_context(
                open_deps(self.settings, tenant=self.tenant, llm=self._llm)
            )
        return self._deps

    def traces(self) -> TraceStore:
        """The trace store the viewer reads (``DATA_DIR/runs.sqlite``), so eval runs can be opened there."""
        if self._traces is None:
            self._traces = TraceStore.open(self.settings.path("runs.sqlite"))
            self._stack.callback(self._traces.close)
        return self._traces

    @property
    def opened(self) -> Deps | None:
        """The Deps if they were opened, else None (for run metadata)."""
        return self._deps

    async def aclose(self) -> None:
        """Close Deps (and the LLM server they started)."""
        await self._stack.aclose()
        self._deps = None
        self._traces = None
