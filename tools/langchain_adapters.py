"""Any retrieval tool as a LangChain ``BaseRetriever`` and as a LangChain tool (``StructuredTool``).

Both run the tool's own ``search`` on the loop that owns its clients (``tools.loop_bridge``), so they work
from LangChain's sync ``invoke`` as well as from ``ainvoke``. A retrieved passage becomes a LangChain
``Document`` whose ``id`` is the evidence id and whose metadata holds the other evidence fields.
"""

from __future__ import annotations

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from knowledge.models import Evidence
from tools.base import RetrievalTool, ToolError
from tools.loop_bridge import LoopBridge

MAX_K = 20
"""The most passages one LangChain tool call may ask for."""


def to_document(evidence: Evidence) -> LCDocument:
    """One evidence item as a LangChain document (metadata: every evidence field but the text)."""
    return LCDocument(page_content=evidence.text, metadata=evidence.model_dump(exclude={"text"}), id=evidence.id)


def _filters(doc_id: str | None, extra: dict[str, str] | None) -> dict[str, str] | None:
    out = dict(extra or {})
    if doc_id:
        out["doc_id"] = doc_id
    return out or None


class WaypointRetriever(BaseRetriever):
    """A Waypoint retrieval tool (``vector_search``, ``graph_search``, ``tree_search``) as a retriever."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: RetrievalTool
    """The tool doing the search."""
    k: int = Field(default=5, ge=1, le=100)
    """Passages per query."""
    filters: dict[str, str] | None = None
    """Passed to the tool (``doc_id`` works for every tool)."""
    bridge: LoopBridge = Field(default_factory=LoopBridge)
    """Where the tool's clients live (see ``tools.loop_bridge``)."""

    async def _search(self, query: str) -> list[LCDocument]:
        return [to_document(e) for e in await self.tool.search(query, k=self.k, filters=self.filters)]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[LCDocument]:
        return self.bridge.run(lambda: self._search(query))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[LCDocument]:
        return await self.bridge.arun(lambda: self._search(query))


class SearchArgs(BaseModel):
    """The arguments an LLM gives a Waypoint search tool."""

    query: str = Field(min_length=1, max_length=2000, description="What to search for: short and specific.")
    k: int = Field(default=5, ge=1, le=MAX_K, description="How many passages to return.")
    doc_id: str | None = Field(default=None, description="Only search this document (its id).")


def format_evidence(items: list[Evidence]) -> str:
    """The passages as text an LLM reads: a numbered header (title, section, id) above each passage."""
    if not items:
        return "No passages found."
    blocks = []
    for i, e in enumerate(items, 1):
        where = " > ".join([e.title or e.doc_id, *e.section_path])
        blocks.append(f"[{i}] {where} (id {e.id}, doc {e.doc_id})\n{e.text}")
    return "\n\n".join(blocks)


def as_langchain_tool(tool: RetrievalTool, *, bridge: LoopBridge | None = None) -> StructuredTool:
    """The retrieval tool as a LangChain tool: content is the passages as text, the artifact their documents.

    A failing search (``ToolError``) becomes the tool's error message, returned to the model to recover from.
    """
    via = bridge or LoopBridge()

    async def _search(query: str, k: int, doc_id: str | None) -> tuple[str, list[LCDocument]]:
        try:
            found = await tool.search(query, k=k, filters=_filters(doc_id, None))
        except ToolError as exc:
            raise ToolException(str(exc)) from exc
        return format_evidence(found), [to_document(e) for e in found]

    def run(query: str, k: int = 5, doc_id: str | None = None) -> tuple[str, list[LCDocument]]:
        return via.run(lambda: _search(query, k, doc_id))

    async def arun(query: str, k: int = 5, doc_id: str | None = None) -> tuple[str, list[LCDocument]]:
        return await via.arun(lambda: _search(query, k, doc_id))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=tool.name,
        description=tool.description,
        args_schema=SearchArgs,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def langchain_retrievers(
    tools: dict[str, RetrievalTool], *, bridge: LoopBridge | None = None, k: int = 5
) -> dict[str, WaypointRetriever]:
    """A retriever per tool, by tool name."""
    via = bridge or LoopBridge()
    return {name: WaypointRetriever(tool=t, k=k, bridge=via) for name, t in tools.items()}


def langchain_tools(tools: dict[str, RetrievalTool], *, bridge: LoopBridge | None = None) -> list[StructuredTool]:
    """A LangChain tool per retrieval tool, sorted by name."""
    return [as_langchain_tool(tools[name], bridge=bridge) for name in sorted(tools)]
