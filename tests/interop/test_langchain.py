"""Waypoint through LangChain's own interfaces: each retrieval tool as a retriever and as a tool, the agent as
a runnable; over the real stores (sample knowledge base ingested once) with a scripted LLM."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from interop_support import lighthouse_reply, sample_documents
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ValidationError

from agents.llm import ScriptedLLM
from api.wiring import open_app_deps
from graphs.langchain_kit import langchain_kit, open_langchain
from knowledge.models import Evidence
from knowledge.settings import LocalLLMConfig, Settings
from tools.base import ToolError
from tools.langchain_adapters import as_langchain_tool, format_evidence
from tools.loop_bridge import BridgeError

QUESTION = "Who built the Harrow Point lighthouse?"


@pytest.fixture(scope="module")
async def kb(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A data dir with the sample knowledge base ingested (vectors, graph, trees) for the default tenant."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("kb") / "data", local=LocalLLMConfig(model="qwen2.5-0.5b"))
    async with open_app_deps(settings, llm=ScriptedLLM()) as deps:
        result = await deps.documents.ingest_paths(sample_documents(), tenant=settings.default_tenant)
    assert result.documents == len(sample_documents()) and not result.errors
    return settings


def scripted() -> ScriptedLLM:
    return ScriptedLLM([lighthouse_reply] * 60)


def test_retrievers_from_sync_code(kb: Settings) -> None:
    with langchain_kit(kb, llm=scripted()) as kit:
        assert set(kit.retrievers) == {"vector_search", "graph_search", "tree_search"}
        vector = kit.retrievers["vector_search"]
        assert isinstance(vector, BaseRetriever)
        docs = vector.invoke("Who designed the Harrow Point Lighthouse?")
        assert docs and all(isinstance(d, Document) for d in docs) and len(docs) <= 5
        assert any("Ada Venn" in d.page_content for d in docs)
        top = docs[0]
        assert top.id == top.metadata["id"] and top.metadata["tool"] == "vector_search" and top.metadata["doc_id"]
        assert "text" not in top.metadata
        graph = kit.retrievers["graph_search"].invoke("Ada Venn Kestrel Ford")
        assert graph and all(d.metadata["tool"] == "graph_search" for d in graph)
        batched = vector.batch(["Tobias Marr", "river Sable"])
        assert len(batched) == 2 and all(batched)


async def test_retrievers_from_async_code_and_other_threads(kb: Settings) -> None:
    async with open_langchain(kb, llm=scripted()) as kit:
        vector = kit.retrievers["vector_search"]
        docs = await vector.ainvoke("Great Gale 1889 keeper")
        assert any("Marr" in d.page_content for d in docs)
        # sync code on another thread is sent to the loop that owns the stores
        from_thread = await asyncio.to_thread(vector.invoke, "Great Gale 1889 keeper")
        assert [d.id for d in from_thread] == [d.id for d in docs]
        # sync code on the owner loop itself would block it: a clear error, not a hang
        with pytest.raises(BridgeError, match="async"):
            vector.invoke("Great Gale 1889 keeper")
        only = kit.retrievers["vector_search"].model_copy(update={"filters": {"doc_id": docs[0].metadata["doc_id"]}})
        assert {d.metadata["doc_id"] for d in await only.ainvoke("lighthouse")} == {docs[0].metadata["doc_id"]}


def test_tools_through_the_tool_interface(kb: Settings) -> None:
    with langchain_kit(kb, llm=scripted()) as kit:
        tools = {t.name: t for t in kit.tools}
        assert set(tools) == {"vector_search", "graph_search", "tree_search"}
        vector = tools["vector_search"]
        assert isinstance(vector, BaseTool) and "BM25" in vector.description
        assert set(vector.args) == {"query", "k", "doc_id"}
        text = vector.invoke({"query": "Who built the Harrow Point Lighthouse?", "k": 2})
        assert isinstance(text, str) and text.startswith("[1] ") and "[2] " in text and "[3] " not in text
        assert "Ada Venn" in text
        message = vector.invoke(
            {"name": "vector_search", "args": {"query": "Tobias Marr"}, "id": "call_1", "type": "tool_call"}
        )
        assert isinstance(message, ToolMessage) and message.tool_call_id == "call_1"
        assert message.artifact and all(isinstance(d, Document) for d in message.artifact)
        assert message.status == "success"
        with pytest.raises(ValidationError):
            vector.invoke({"query": "x", "k": 500})


async def test_tools_from_async_code(kb: Settings) -> None:
    async with open_langchain(kb, llm=scripted()) as kit:
        graph = next(t for t in kit.tools if t.name == "graph_search")
        text = await graph.ainvoke({"query": "Ada Venn Kestrel Ford", "k": 3})
        assert text.startswith("[1] ") and "graph" not in text.split("\n", 1)[0]


class BrokenTool:
    """A retrieval tool whose store is down."""

    name = "broken_search"
    description = "Always fails."

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        raise ToolError("broken_search failed: store unreachable")


def test_a_failing_search_becomes_the_tools_error_message() -> None:
    tool = as_langchain_tool(BrokenTool())
    assert tool.invoke({"query": "anything"}) == "broken_search failed: store unreachable"
    message = tool.invoke({"name": "broken_search", "args": {"query": "x"}, "id": "c2", "type": "tool_call"})
    assert isinstance(message, ToolMessage) and message.status == "error"


def test_format_evidence() -> None:
    items = [
        Evidence(id="c1", doc_id="d1", text="First.", title="Doc", section_path=["Part", "Sub"]),
        Evidence(id="c2", doc_id="d2", text="Second."),
    ]
    assert format_evidence(items) == "[1] Doc > Part > Sub (id c1, doc d1)\nFirst.\n\n[2] d2 (id c2, doc d2)\nSecond."
    assert format_evidence([]) == "No passages found."


def test_agent_runnable_from_sync_code(kb: Settings) -> None:
    with langchain_kit(kb, llm=scripted()) as kit:
        agent = kit.agent
        assert isinstance(agent, Runnable)
        result = agent.invoke(QUESTION)
        assert result["status"] == "ok" and result["answer"].startswith("Ada Venn"), result
        assert result["citations"] and result["run_id"] and result["thread_id"]
        chunks = list(agent.stream({"question": "And when?"}, config={"configurable": {"thread_id": "th-1"}}))
        kinds = [c["event"]["kind"] for c in chunks]
        assert kinds[0] == "run_started" and kinds[-1] == "done" and "token" in kinds and "answer" in kinds
        assert chunks[0]["event"]["thread_id"] == "th-1" and len({c["run_id"] for c in chunks}) == 1
        first = chunks[0]["seq"]
        assert [c["seq"] for c in chunks] == list(range(first, first + len(chunks)))  # in order, none missing
        follow = agent.invoke({"messages": [HumanMessage("Who built it?")], "thread_id": "th-1"})
        assert follow["thread_id"] == "th-1" and follow["run_id"] != chunks[0]["run_id"]
        with pytest.raises(ValueError, match="unknown input keys"):
            agent.invoke({"query": "wrong key"})
        with pytest.raises(ValueError, match="bad agent input"):
            agent.invoke("")


class Recorder(AsyncCallbackHandler):
    """Records the chain runs LangChain reports."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: list[dict[str, Any]] = []

    async def on_chain_start(
        self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.started.append(str(kwargs.get("name")))

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ended.append(outputs)


async def test_agent_runnable_from_async_code(kb: Settings) -> None:
    async with open_langchain(kb, llm=scripted()) as kit:
        recorder = Recorder()
        result = await kit.agent.ainvoke({"question": QUESTION}, config={"callbacks": [recorder]})
        assert result["status"] == "ok" and result["citations"]
        # the runnable is the outer chain; the LangGraph graph and its nodes report as its children
        assert recorder.started[0] == "waypoint_agent" and len(recorder.started) > 1
        assert recorder.ended[-1]["run_id"] == result["run_id"]
        chunks = [c async for c in kit.agent.astream(QUESTION)]
        assert chunks[0]["event"]["kind"] == "run_started" and chunks[-1]["event"]["kind"] == "done"
        tokens = "".join(c["event"]["text"] for c in chunks if c["event"]["kind"] == "token")
        assert tokens.startswith("Ada Venn")
        # leaving a stream early stops the run (the agent's stream is closed, no task left running)
        stream = kit.agent.astream(QUESTION)
        assert (await anext(stream))["event"]["kind"] == "run_started"
        await stream.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0)
        assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("run-")]


async def test_agent_runnable_on_another_loop(kb: Settings, tmp_path: Path) -> None:
    """Services opened on a background loop (the sync kit), awaited from this loop."""
    with langchain_kit(kb, llm=scripted()) as kit:
        result = await kit.agent.ainvoke(QUESTION)
        assert result["status"] == "ok"
        kinds = [c["event"]["kind"] async for c in kit.agent.astream(QUESTION)]
        assert kinds[0] == "run_started" and kinds[-1] == "done"
        docs = await kit.retrievers["vector_search"].ainvoke("lighthouse keeper")
        assert docs
