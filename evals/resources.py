"""Lazily opened, shared eval resources: the services (opened once), the dataset's tenant (ingested once), its Deps."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from contextlib import AsyncExitStack
from typing import Any

from evals.datasets import Dataset
from graphs.deps import Deps
from graphs.public import LLMBackend, NoLLM
from graphs.services import Services, open_services
from graphs.tracing.run_store import RunStore
from knowledge.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["EvalResources", "NoLLM", "ingest_corpus", "tenant_for"]


def tenant_for(dataset: Dataset) -> str:
    """The isolated tenant of a dataset's corpus: its name plus 12 hex of the corpus hash."""
    safe = re.sub(r"[^a-z0-9]+", "-", dataset.name.lower()).strip("-") or "dataset"
    return f"eval-{safe}-{dataset.corpus_hash[:12]}"


def _merge(reports: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for raw in reports:
        for key, value in raw.items():
            if isinstance(value, dict):  # stage_seconds: summed per stage
                into = merged.setdefault(key, {})
                for stage, secs in value.items():
                    into[stage] = into.get(stage, 0.0) + secs
                continue
            count = len(value) if isinstance(value, list) else value
            merged[key] = merged.get(key, 0) + count if isinstance(count, int | float) else count
    return merged


async def ingest_corpus(services: Services, dataset: Dataset, tenant: str) -> dict[str, Any]:
    """Ingest the corpus and the ``docs/`` documents into ``tenant`` (vectors, graph, trees); the ingest report."""
    from evals.documents import load_documents

    settings = services.settings
    docs = load_documents(dataset, settings.ingest) if dataset.doc_files else []
    reports: list[Any] = []
    if dataset.corpus_path is not None:
        reports.append(await asyncio.to_thread(services.ingestor.ingest_corpus, dataset.corpus_path, tenant))
    if docs:
        reports.append(await asyncio.to_thread(services.ingestor.ingest_documents, docs, tenant))
    merged = _merge([dict(report.model_dump(mode="json")) for report in reports])
    if merged.get("failed"):
        log.warning("ingestion of %s failed for %d inputs", dataset.name, merged["failed"])
    return merged


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
        self._services: Services | None = None
        self._deps: Deps | None = None

    async def services(self) -> Services:
        """Every service, opened once (``graphs.services.open_services``)."""
        if self._services is None:
            self._services = await self._stack.enter_async_context(open_services(self.settings, llm=self._llm))
        return self._services

    async def ensure_ingested(self) -> None:
        """Ingest the corpus into the tenant unless a marker says this exact corpus is already there."""
        marker = self.settings.path("evals", "tenants", f"{self.tenant}.json")
        if marker.exists():
            return
        log.info("ingesting %s into tenant %r", self.dataset.name, self.tenant)
        report = await ingest_corpus(await self.services(), self.dataset, self.tenant)
        where = {"corpus": str(self.dataset.corpus_path), "docs": str(self.dataset.docs_dir)}
        marker.write_text(json.dumps({**where, "report": report}, indent=1))

    async def deps(self) -> Deps:
        """The run Deps (LLM + tools over the eval tenant), ingesting the corpus first."""
        if self._deps is None:
            await self.ensure_ingested()
            self._deps = (await self.services()).deps_for(self.tenant)
        return self._deps

    async def traces(self) -> RunStore:
        """The trace store ``waypoint serve`` uses (``graphs.stores``: Postgres or ``DATA_DIR/runs.sqlite``), so the
        viewer and ``/v1/runs/{id}`` of any replica open eval runs."""
        return (await self.services()).state.traces

    @property
    def opened(self) -> Deps | None:
        """The Deps if they were opened, else None (for run metadata)."""
        return self._deps

    async def aclose(self) -> None:
        """Close every service (and the LLM server they started)."""
        await self._stack.aclose()
        self._services = None
        self._deps = None
