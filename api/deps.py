"""What the app needs from the layers below, as small protocols, and the bundle the lifespan opens.

``create_app`` takes a ``deps_factory``: an async context manager factory that opens ``AppDeps``
once at start-up and closes them at shutdown. The default (``api.wiring.open_app_deps``) starts the
LLM and the embedded stores; tests pass scripted ones.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from graphs.events import Envelope
from graphs.public import RetrievalTool
from graphs.runner import RunRequest
from graphs.tracing.run_store import RunStore
from knowledge.settings import Settings

RunSpec = RunRequest
"""What the API asks the agent to do: the run contract itself (``graphs.runner.RunRequest``), built once in
``api/start.py`` with the run id, tenant and thread the API chose, and passed to the agent unchanged."""


RunFn = Callable[[RunSpec], AsyncIterator[Envelope]]
"""Starts a run: yields run_started first and done last; errors inside become ``error`` + ``done``."""


@dataclass(frozen=True, kw_only=True)
class DocumentInfo:
    """A stored document, as listed to its tenant."""

    id: str
    title: str
    source: str = ""
    chunks: int = 0


@dataclass(frozen=True, kw_only=True)
class IngestResult:
    """What one ingest job did."""

    documents: int
    """Documents added or updated."""
    chunks: int
    """Chunks written."""
    skipped: int = 0
    """Documents left as they were (unchanged content)."""
    errors: list[str] = field(default_factory=list)
    """One message per file that could not be ingested."""


class DocumentService(Protocol):
    """Tenant-scoped document operations (the ingestion engineer's ``Ingestor`` behind an adapter)."""

    async def ingest_paths(
        self, paths: Sequence[Path], *, tenant: str, names: Sequence[str] | None = None
    ) -> IngestResult:
        """Load, chunk, embed and index files for the tenant.

        ``names`` (one per path) are uploaded files' client-visible names: they, not the server
        paths, make the document ids and sources.
        """
        ...

    async def ingest_corpus(self, path: Path, *, tenant: str, name: str | None = None) -> IngestResult:
        """Ingest a JSONL corpus (one passage per line) for the tenant; ``name``: its client-visible name."""
        ...

    async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
        """The tenant's documents."""
        ...

    async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
        """Remove chunks, graph facts and tree of one document; False when the tenant has no such document."""
        ...


ToolsFn = Callable[[str], Awaitable[dict[str, RetrievalTool]]]
"""A tenant's retrieval tools by name (``vector_search``, ``graph_search``, ``tree_search``), opened on first use."""

ReadyCheck = Callable[[], Awaitable[bool]]
"""A readiness probe of one backend (LLM, vector store, graph store)."""


@dataclass(kw_only=True)
class AppDeps:
    """Everything the routes use, opened once at start-up and shared by every request and tenant."""

    run: RunFn
    """Starts agent runs."""
    documents: DocumentService
    """Document ingestion and deletion."""
    ready_checks: dict[str, ReadyCheck] = field(default_factory=dict)
    """Named readiness probes for ``/readyz``."""
    tool_names: list[str] = field(default_factory=list)
    """Tools a run may be restricted to; empty: not checked here."""
    model: str = ""
    """What serves the LLM (shown in ``/readyz``)."""
    traces: RunStore | None = None
    """The trace store the services opened; None: the app opens ``DATA_DIR/runs.sqlite`` itself."""
    tools: ToolsFn | None = None
    """The tenant's retrieval tools, for front ends that search without the agent (MCP); None: not offered."""
    llm_slots: int | None = None
    """Requests the LLM backend serves at once (the embedded llama.cpp's ``n_parallel``); None: unknown. The
    default run limit of admission control (``api.max_concurrent_runs``)."""


DepsFactory = Callable[[Settings], AbstractAsyncContextManager[AppDeps]]
"""Opens ``AppDeps`` for the app's lifespan."""
