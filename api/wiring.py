"""The default dependencies: the configured LLM, the agent per tenant, the ingestion pipeline.

The LLM (and, for the embedded default, its llama.cpp server), the embedder, the vector store and
the graph and tree indexes (fed by the same ingest, so a delete removes chunks, graph facts and
tree) are opened once and shared by every tenant; each tenant gets its own ``graphs.deps.Deps`` (tools
bound to that tenant), opened on the tenant's first run and kept until shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from agents.llm import LLMBackend
from agents.llm.factory import start_llm
from agents.tree_summarizer import TreeSummarizer
from api.deps import AppDeps, DocumentInfo, IngestResult, RunSpec
from graphs.deps import Deps, open_checkpointer, open_deps
from graphs.events import Envelope
from graphs.runner import RunRequest, stream_run
from knowledge.embeddings import build_embedder
from knowledge.indexes import Indexes, open_indexes
from knowledge.ingest import Ingestor, IngestReport
from knowledge.settings import Settings
from knowledge.vector_store import open_vector_store
from tools.base import RetrievalTool

log = logging.getLogger(__name__)

TOOL_NAMES = ["vector_search", "graph_search", "tree_search"]


class TenantAgents:
    """One ``Deps`` per tenant over the shared LLM and checkpointer, opened lazily."""

    def __init__(
        self, settings: Settings, llm: LLMBackend, checkpointer: Any, stack: AsyncExitStack, indexes: Indexes
    ) -> None:
        self._settings = settings
        self._indexes = indexes
        self._llm = llm
        self._checkpointer = checkpointer
        self._stack = stack
        self._deps: dict[str, Deps] = {}
        self._lock = asyncio.Lock()

    async def deps_for(self, tenant: str) -> Deps:
        """The tenant's Deps (opened on first use)."""
        async with self._lock:
            if tenant not in self._deps:
                cm = open_deps(
                    self._settings,
                    tenant=tenant,
                    llm=self._llm,
                    checkpointer=self._checkpointer,
                    indexes=self._indexes,
                )
                self._deps[tenant] = await self._stack.enter_async_context(cm)
            return self._deps[tenant]

    async def tools_for(self, tenant: str) -> dict[str, RetrievalTool]:
        """The tenant's retrieval tools by name (the ``AppDeps.tools`` of this wiring)."""
        return (await self.deps_for(tenant)).tools

    async def run(self, spec: RunSpec) -> AsyncIterator[Envelope]:
        """Run the agent for one request (the API's ``RunFn``)."""
        deps = await self.deps_for(spec.tenant)
        request = RunRequest(
            question=spec.question,
            thread_id=spec.thread_id,
            tenant=spec.tenant,
            tools=spec.tools,
            run_id=spec.run_id,
            options=spec.options,
        )
        async for envelope in stream_run(deps, request):
            yield envelope


def _result(report: IngestReport) -> IngestResult:
    return IngestResult(
        documents=len(report.added) + len(report.replaced),
        chunks=report.chunks,
        skipped=len(report.unchanged),
        errors=[f"{f.source}: {f.error}" for f in report.failed],
    )


AfterIngest = Callable[[str, list[str]], Awaitable[object]]
"""Work done after an ingest on the documents it added or replaced (tenant, doc ids): node summaries."""


class IngestorDocuments:
    """The ``DocumentService`` over the ingestion engineer's ``Ingestor`` (blocking work in a thread, one at a time)."""

    def __init__(self, ingestor: Ingestor, *, after: AfterIngest | None = None) -> None:
        self._ingestor = ingestor
        self._after = after
        self._lock = asyncio.Lock()

    async def ingest_paths(self, paths: Sequence[Path], *, tenant: str) -> IngestResult:
        async with self._lock:
            report = await asyncio.to_thread(self._ingestor.ingest_paths, list(paths), tenant)
            await self._follow_up(tenant, report)
            return _result(report)

    async def ingest_corpus(self, path: Path, *, tenant: str) -> IngestResult:
        async with self._lock:
            report = await asyncio.to_thread(self._ingestor.ingest_corpus, path, tenant)
            await self._follow_up(tenant, report)
            return _result(report)

    async def _follow_up(self, tenant: str, report: IngestReport) -> None:
        """Run the after-ingest work; its failure is logged, never fails the ingest (the documents are in)."""
        changed = [*report.added, *report.replaced]
        if self._after is None or not changed:
            return
        try:
            await self._after(tenant, changed)
        except Exception:  # summaries are an upgrade: extractive ones stay in place
            log.exception("after-ingest work failed for %d documents of tenant %r", len(changed), tenant)

    async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
        docs = await asyncio.to_thread(self._ingestor.list_documents, tenant)
        return [DocumentInfo(id=d.doc_id, title=d.title, source=d.source, chunks=d.chunks) for d in docs]

    async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
        async with self._lock:
            return await asyncio.to_thread(self._ingestor.delete_document, doc_id, tenant)


@asynccontextmanager
async def open_app_deps(settings: Settings, *, llm: LLMBackend | None = None) -> AsyncIterator[AppDeps]:
    """Start (or take) the LLM, open the stores and the ingestor; close them all at the end."""
    async with AsyncExitStack() as stack:
        model = getattr(llm, "model_name", "")
        if llm is None:
            runtime = await asyncio.to_thread(start_llm, settings)
            stack.push_async_callback(runtime.aclose)
            llm, model = runtime.llm, f"{runtime.backend}:{runtime.model}"
        checkpointer = await open_checkpointer(stack, settings)
        embedder = build_embedder(settings)
        store = open_vector_store(settings)
        stack.callback(store.close)
        indexes = stack.enter_context(open_indexes(settings))
        if indexes.graph is not None:
            stack.push_async_callback(indexes.graph.store.aclose)
        ingestor = Ingestor(settings, embedder, store, sinks=indexes.sinks)
        stack.callback(ingestor.close)
        agents = TenantAgents(settings, llm, checkpointer, stack, indexes)
        after: AfterIngest | None = None
        if settings.tree.summaries_on(remote_llm=bool(settings.llm.base_url)):
            summarizer = TreeSummarizer(llm, indexes.trees, writer=model or "llm", batch=settings.tree.summary_batch)
            after = summarizer.summarize_docs

        async def store_ready() -> bool:
            await asyncio.to_thread(store.count, settings.default_tenant)
            return True

        yield AppDeps(
            run=agents.run,
            documents=IngestorDocuments(ingestor, after=after),
            ready_checks={"llm": llm.health, "vector_store": store_ready},
            tool_names=TOOL_NAMES,
            model=model,
            tools=agents.tools_for,
        )
