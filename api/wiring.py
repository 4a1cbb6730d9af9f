"""The API's dependencies over the composition root: the agent per tenant, the ingestion pipeline.

``graphs.services.open_services`` opens the LLM (and, for the embedded default, its llama.cpp server),
the embedder, the vector store, the graph and tree indexes (fed by the same ingest, so a delete removes
chunks, graph facts and tree) and the state stores once; each tenant's ``Deps`` (tools bound to that
tenant) come from ``Services.deps_for``. This module only adapts them to ``api.deps.AppDeps``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

from api.deps import AppDeps, DocumentInfo, IngestResult, RunSpec
from api.tenants import partition_secret, partition_tag
from graphs.events import Envelope
from graphs.public import LOCAL_BACKENDS, LLMBackend, RetrievalTool
from graphs.runner import stream_run
from graphs.services import AfterIngest, Services, open_services
from graphs.warmup import agent_descriptions, warm_if_on
from knowledge.ingest import Ingestor, IngestReport
from knowledge.settings import Settings

log = logging.getLogger(__name__)

LOCAL = tuple(f"{b}:" for b in LOCAL_BACKENDS)
"""How ``Services.model`` starts when the services started a local llama.cpp server (wheel or child)."""


async def run_agent(services: Services, spec: RunSpec, *, secret: bytes = b"") -> AsyncIterator[Envelope]:
    """Run the agent for one request on its tenant's Deps (the API's ``RunFn``).

    ``secret``: behind each tenant's prefix-cache partition tag (``api.tenants.partition_tag``); empty: none.
    """
    tenant = spec.tenant or services.settings.default_tenant
    deps = services.deps_for(tenant, cache_partition=partition_tag(secret, tenant) if secret else "")
    async for envelope in stream_run(deps, spec):
        yield envelope


def _result(report: IngestReport) -> IngestResult:
    return IngestResult(
        documents=len(report.added) + len(report.replaced),
        chunks=report.chunks,
        skipped=len(report.unchanged),
        errors=[f"{f.source}: {f.error}" for f in report.failed],
    )


class IngestorDocuments:
    """The ``DocumentService`` over the ingestion engineer's ``Ingestor`` (blocking work in a thread, one at a time)."""

    def __init__(self, ingestor: Ingestor, *, after: AfterIngest | None = None) -> None:
        self._ingestor = ingestor
        self._after = after
        self._lock = asyncio.Lock()

    async def ingest_paths(
        self, paths: Sequence[Path], *, tenant: str, names: Sequence[str] | None = None
    ) -> IngestResult:
        async with self._lock:
            report = await asyncio.to_thread(partial(self._ingestor.ingest_paths, list(paths), tenant, names=names))
            await self._follow_up(tenant, report)
            return _result(report)

    async def ingest_corpus(self, path: Path, *, tenant: str, name: str | None = None) -> IngestResult:
        async with self._lock:
            report = await asyncio.to_thread(partial(self._ingestor.ingest_corpus, path, tenant, name=name))
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
async def _warming(services: Services) -> AsyncIterator[None]:
    """Warm the agent's shared prefix in the background while the app serves (``llm.warm_prefix``); stop it at exit.

    In the background so that ``/readyz`` never waits on a prefill; a failure only logs (``graphs.warmup``).
    """
    tools = services.tools_for(services.settings.default_tenant)
    task = asyncio.create_task(
        warm_if_on(services.llm, services.settings.llm, agent_descriptions(tools)), name="prefix-warm-up"
    )
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@asynccontextmanager
async def open_app_deps(settings: Settings, *, llm: LLMBackend | None = None) -> AsyncIterator[AppDeps]:
    """Open every service (``open_services``), adapt them to ``AppDeps``; close them all at the end."""
    async with open_services(settings, llm=llm) as services, _warming(services):
        configured = settings.api.cache_partition_secret
        secret = partition_secret(
            configured.get_secret_value() if configured else None, settings.path("cache_partition.key")
        )

        async def store_ready() -> bool:
            await asyncio.to_thread(services.vectors.count, settings.default_tenant)
            return True

        async def tools_for(tenant: str) -> dict[str, RetrievalTool]:
            return services.tools_for(tenant)

        async def run(spec: RunSpec) -> AsyncIterator[Envelope]:
            async for envelope in run_agent(services, spec, secret=secret):
                yield envelope

        yield AppDeps(
            run=run,
            documents=IngestorDocuments(services.ingestor, after=services.after_ingest),
            ready_checks={"llm": services.llm.health, "vector_store": store_ready},
            tool_names=services.tool_names(),
            model=services.model,
            traces=services.state.traces,
            tools=tools_for,
            llm_slots=settings.local.n_parallel if services.model.startswith(LOCAL) else None,
        )
