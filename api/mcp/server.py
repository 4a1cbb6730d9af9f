"""The MCP server's tools over the app's state: ``ask``, ``search``, ``ingest``, ``list_documents``, deletes.

The same state the HTTP API runs on (``api.state.AppState``): an ``ask`` is started, validated and stored
like a ``POST /v1/chat`` run (``api.start.start_run``), so its run id opens it in the trace viewer and in
``/v1/runs/{id}``; every call is scoped to the caller's tenant (``api.mcp.access``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as MCPToolError
from pydantic import BaseModel, Field

from api.deps import IngestResult
from api.errors import APIError
from api.mcp.access import Access, AccessError
from api.mcp.ingest import IngestRefused, PathPolicy, text_file
from api.mcp.progress import progress_message
from api.start import admit_run
from api.state import AppState
from graphs.public import ToolError
from graphs.run_result import RunResult, fold
from knowledge.models import Evidence

INSTRUCTIONS = (
    "Waypoint answers questions from a knowledge base with cited passages. Use `ask` for a question that "
    "needs reasoning over several passages (it plans, searches, checks and answers with citations; pass "
    "`thread_id` back to ask a follow-up). Use `search` to get raw passages from one retrieval tool. "
    "`ingest` adds documents (text, or files the server may read); `list_documents` shows what is there."
)
SearchToolName = Literal["vector_search", "graph_search", "tree_search"]
CORPUS_SUFFIX = ".jsonl"


class SearchResult(BaseModel):
    """Passages one retrieval tool returned, best first."""

    tool: str
    query: str
    passages: list[Evidence]


class IngestSummary(BaseModel):
    """What an ingest did."""

    documents: int
    """Documents added or replaced."""
    chunks: int
    """Chunks written."""
    skipped: int = 0
    """Documents left as they were (unchanged content)."""
    errors: list[str] = Field(default_factory=list)
    """One message per file that could not be ingested."""


class DocumentEntry(BaseModel):
    """A stored document."""

    id: str
    title: str
    source: str
    chunks: int


class DocumentList(BaseModel):
    """The caller's documents."""

    documents: list[DocumentEntry]


def _sum(results: list[IngestResult]) -> IngestSummary:
    return IngestSummary(
        documents=sum(r.documents for r in results),
        chunks=sum(r.chunks for r in results),
        skipped=sum(r.skipped for r in results),
        errors=[e for r in results for e in r.errors],
    )


def build_server(state: AppState, access: Access, paths: PathPolicy) -> MCPServer[Any]:
    """The MCP server with Waypoint's tools over ``state``; tenants from ``access``, file paths by ``paths``."""
    server: MCPServer[Any] = MCPServer("waypoint", instructions=INSTRUCTIONS, version="0.1.0")

    def tenant_of(ctx: Context[Any, Any]) -> str:
        try:
            return access.tenant(ctx.headers)
        except AccessError as exc:
            raise MCPToolError(str(exc)) from exc

    @server.tool(title="Ask the knowledge base")
    async def ask(
        question: Annotated[str, Field(min_length=1, description="The question, in natural language.")],
        ctx: Context[Any, Any],
        thread_id: Annotated[str | None, Field(description="Continue this conversation (from an earlier ask).")] = None,
        tools: Annotated[
            list[SearchToolName] | None, Field(description="Only let the agent use these retrieval tools.")
        ] = None,
    ) -> RunResult:
        """Answer a question from the knowledge base with citations. The agent plans sub-questions, searches
        (vector, knowledge-graph and document-tree retrieval), grades what it finds and answers citing the
        passages; progress notifications report each step. Returns the answer, its citations, the run id
        (to look the run up in Waypoint's trace viewer) and the thread id (to ask a follow-up). An answer the
        knowledge base does not contain comes back with not_found=true instead of a guess; a run that failed
        has status=error and says why in errors."""
        tenant = tenant_of(ctx)
        try:  # behind the same admission control as POST /v1/chat: a full server refuses, naming Retry-After
            run = await admit_run(
                state, tenant=tenant, message=question, thread_id=thread_id, tools=list(tools or []) or None
            )
        except APIError as exc:
            raise MCPToolError(exc.message) from exc
        result = RunResult(run_id=run.run_id, thread_id=run.thread_id)
        sent = 0
        try:
            async for envelope in run.events:
                result = fold(result, envelope)
                line = progress_message(envelope.event)
                if line is not None:
                    sent += 1
                    await ctx.report_progress(sent, None, line)
        finally:  # a cancelled call cancels the run (and records its end)
            aclose = getattr(run.events, "aclose", None)
            if aclose is not None:
                await aclose()
        return result

    @server.tool(title="Search with one retrieval tool")
    async def search(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="What to search for.")],
        ctx: Context[Any, Any],
        tool: Annotated[SearchToolName, Field(description="Which retrieval tool to use.")] = "vector_search",
        k: Annotated[int, Field(ge=1, le=20, description="How many passages to return.")] = 5,
        doc_id: Annotated[str | None, Field(description="Only search this document (its id).")] = None,
    ) -> SearchResult:
        """Search the knowledge base with one retrieval tool and return its passages, best first, without
        answering. vector_search: meaning plus exact words (hybrid dense + BM25); graph_search: follows a
        knowledge graph of the entities a question names (good for multi-hop 'the X of the Y' questions);
        tree_search: an LLM reads documents' tables of contents and opens the right sections."""
        tenant = tenant_of(ctx)
        if state.deps.tools is None:
            raise MCPToolError("this server does not offer direct search")
        available = await state.deps.tools(tenant)
        if tool not in available:
            raise MCPToolError(f"tool {tool!r} is not available here; available: {sorted(available)!r}")
        try:
            found = await available[tool].search(query, k=k, filters={"doc_id": doc_id} if doc_id else None)
        except ToolError as exc:
            raise MCPToolError(str(exc)) from exc
        return SearchResult(tool=tool, query=query, passages=found)

    def paths_checked(raw: list[str]) -> list[Path]:
        if not raw:
            raise IngestRefused("paths is empty")
        return paths.check(raw)

    @server.tool(title="Add documents")
    async def ingest(
        ctx: Context[Any, Any],
        text: Annotated[str | None, Field(description="Document text to add (Markdown or plain).")] = None,
        title: Annotated[str | None, Field(description="Title of the text; the same title replaces it.")] = None,
        format: Annotated[Literal["markdown", "text"], Field(description="How to read the text.")] = "markdown",
        paths: Annotated[
            list[str] | None,
            Field(max_length=100, description="Files on the server's machine (.md .txt .html .pdf, or .jsonl)."),
        ] = None,
    ) -> IngestSummary:
        """Add documents to the knowledge base: either `text` with a `title`, or `paths` of files the server
        can read (a .jsonl file is a corpus of {id, title, text} passages). They are chunked, embedded and
        indexed for all three retrieval tools; a document whose content is unchanged is skipped."""
        tenant = tenant_of(ctx)
        if (text is None) == (paths is None):
            raise MCPToolError("give either text (with a title) or paths, not both and not neither")
        try:
            if text is not None:
                if title is None:
                    raise IngestRefused("text needs a title")
                files = [text_file(state.settings, tenant, title=title, text=text, fmt=format)]
            else:
                files = paths_checked(paths or [])
        except IngestRefused as exc:
            raise MCPToolError(str(exc)) from exc
        docs = state.deps.documents
        results = [await docs.ingest_corpus(p, tenant=tenant) for p in files if p.suffix.lower() == CORPUS_SUFFIX]
        others = [p for p in files if p.suffix.lower() != CORPUS_SUFFIX]
        if others:
            results.append(await docs.ingest_paths(others, tenant=tenant))
        return _sum(results)

    @server.tool(title="List documents")
    async def list_documents(ctx: Context[Any, Any]) -> DocumentList:
        """List the documents in the knowledge base: id, title, source and number of chunks."""
        tenant = tenant_of(ctx)
        docs = await state.deps.documents.list_documents(tenant=tenant)
        return DocumentList(
            documents=[DocumentEntry(id=d.id, title=d.title, source=d.source, chunks=d.chunks) for d in docs]
        )

    @server.tool(title="Delete a document")
    async def delete_document(
        doc_id: Annotated[str, Field(min_length=1, max_length=256, description="The document's id.")],
        ctx: Context[Any, Any],
    ) -> bool:
        """Remove a document (its passages, graph facts and table of contents); false when there is none."""
        tenant = tenant_of(ctx)
        return await state.deps.documents.delete_document(doc_id, tenant=tenant)

    return server
