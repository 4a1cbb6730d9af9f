"""The composition root opens each service once, shares it between tenants and closes it at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.llm import LLMUnavailableError, ScriptedLLM
from graphs.services import open_deps, open_services
from knowledge.kg.schema import SYNONYM
from knowledge.models import Document
from knowledge.settings import Settings
from knowledge.vector_store import open_vector_store

pytestmark = pytest.mark.integration  # real embedding model, Qdrant and FalkorDB (or a child process)


async def test_one_of_each_service_shared_by_tenants(settings: Settings, tmp_path: Path) -> None:
    llm = ScriptedLLM([])
    async with open_services(settings, llm=llm) as services:
        a, b = services.deps_for("a"), services.deps_for("b")
        assert services.deps_for("a") is a and a is not b and (a.tenant, b.tenant) == ("a", "b")
        assert a.llm is llm and b.llm is llm and a.checkpointer is services.state.checkpointer
        # a tenant's prefix-cache partition is honoured whatever was asked for that tenant before
        tagged = services.deps_for("a", cache_partition="tag-a")
        assert tagged.cache_partition == "tag-a" and a.cache_partition == "" and tagged is not a
        assert services.deps_for("a", cache_partition="tag-a") is tagged
        assert services.tool_names() == list(a.tools)
        assert {"vector_search", "tree_search"} <= set(a.tools)
        va, vb = a.tools["vector_search"], b.tools["vector_search"]
        assert va.store is vb.store is services.vectors and va.embedder is vb.embedder is services.embedder  # type: ignore[attr-defined]
        assert (va.tenant, vb.tenant) == ("a", "b")  # type: ignore[attr-defined]

        doc = tmp_path / "note.md"
        doc.write_text("# Kestrel Ford\n\nThe ford was paved in 1911 by the parish.\n")
        report = services.ingestor.ingest_paths([doc], "a")
        assert len(report.added) == 1
        hits = await va.search("when was the ford paved", k=1)
        assert hits and "1911" in hits[0].text
        assert await vb.search("when was the ford paved", k=1) == []  # tenant b sees none of a's documents
    store = open_vector_store(settings)  # closed at the end: the path can be opened again
    store.close()


async def test_without_an_llm_nothing_is_started(settings: Settings) -> None:
    async with open_services(settings, start=False, graph=False) as services:
        assert services.indexes.graph is None and "graph_search" not in services.tool_names()
        with pytest.raises(LLMUnavailableError, match="no LLM was started"):
            await services.llm.complete([{"role": "user", "content": "hi"}])


async def test_open_deps_with_given_tools_opens_no_store(settings: Settings) -> None:
    async with open_deps(settings, tenant="t", llm=ScriptedLLM([]), tools={}) as deps:
        assert deps.tools == {} and deps.tenant == "t" and deps.checkpointer is not None
        store = open_vector_store(settings)  # nobody else holds the local Qdrant path
        store.close()


async def test_graph_synonyms_setting_links_synonyms_at_ingest(settings: Settings) -> None:
    on = settings.model_copy(update={"graph": settings.graph.model_copy(update={"synonyms": True})})
    async with open_services(on, start=False, trees=False) as services:
        assert services.indexes.graph is not None
        docs = [
            Document(id="a", title="Yuri Gagarin", text="Yuri Gagarin was a pilot of the Soviet Union.", source="a"),
            Document(id="b", title="Vostok 1", text="Vostok 1 was launched by the USSR.", source="b"),
        ]
        assert not services.ingestor.ingest_documents(docs, "t").failed
        edges = (await services.indexes.graph.store.neighbourhood("t", ["soviet union"])).edges
        assert [(e.src, e.dst) for e in edges if e.predicate == SYNONYM] == [("soviet union", "ussr")]
