"""The vector_search tool over the real embedded Qdrant (the default engine) and the real MiniLM: modes, fusion order,
filters, errors."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.embeddings import Embedder
from knowledge.ingest import Ingestor
from knowledge.settings import Settings
from knowledge.sparse import BM25Encoder
from knowledge.vector_store import EdgeStore, QdrantStore, VectorPoint, VectorStoreError, open_vector_store
from tools.base import RetrievalTool, ToolError
from tools.vector_search import VectorSearchRetriever, VectorSearchTool

TENANT = "corpus"


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, corpus_path: Path
) -> Iterator[QdrantStore | EdgeStore]:
    """The 24-passage corpus, ingested once for this module."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("search") / "data")
    store = open_vector_store(settings)
    ing = Ingestor(settings, embedder, store)
    assert len(ing.ingest_corpus(corpus_path, TENANT).added) == 24
    ing.close()
    yield store
    store.close()


@pytest.fixture
def tool(indexed: QdrantStore | EdgeStore, embedder: Embedder) -> VectorSearchTool:
    return VectorSearchTool(embedder, indexed, TENANT)


async def test_tool_implements_the_protocol_and_returns_evidence(tool: VectorSearchTool) -> None:
    assert isinstance(tool, RetrievalTool) and tool.name == "vector_search" and "BM25" in tool.description
    ev = await tool.search("Who is regarded as the first computer programmer?", k=3)
    assert len(ev) == 3 and ev[0].doc_id == "p01" and ev[0].title == "Ada Lovelace"
    assert ev[0].tool == "vector_search" and ev[0].source_ids == [ev[0].id] and ev[0].id.startswith("c_")
    assert "hybrid rank 1" in ev[0].reason and ev[0].score >= ev[1].score >= ev[2].score


async def test_exact_codes_are_found_by_sparse_and_hybrid(tool: VectorSearchTool) -> None:
    for mode in ("sparse", "hybrid"):
        ev = await tool.search("XK-4471", k=2, mode=mode)  # type: ignore[arg-type]
        assert ev[0].doc_id == "p06", mode
    dense = await tool.search("deepest freshwater lake", k=1, mode="dense")
    assert dense[0].doc_id == "p05"


async def test_hybrid_is_reciprocal_rank_fusion_of_the_two_rankings(
    tool: VectorSearchTool, indexed: QdrantStore | EdgeStore
) -> None:
    query = "Which English mathematician worked with Babbage?"
    dense = await tool.search(query, k=24, mode="dense")
    sparse = await tool.search(query, k=24, mode="sparse")
    hybrid = await tool.search(query, k=10, mode="hybrid")
    weights = {"dense": indexed.dense_weight, "sparse": 1.0}
    expected: dict[str, float] = {}
    for name, ranking in (("dense", dense), ("sparse", sparse)):
        for pos, e in enumerate(ranking[: indexed.prefetch_limit]):
            expected[e.id] = expected.get(e.id, 0.0) + 1 / ((pos + 1) / weights[name] + indexed.rrf_k - 1)
    for e in hybrid:
        assert math.isclose(e.score, expected[e.id], rel_tol=1e-6), e.doc_id
    best = sorted(expected.values(), reverse=True)[:10]  # Edge scores in float32: equal to ~1e-7
    assert len(hybrid) == len(best)
    assert all(math.isclose(e.score, s, rel_tol=1e-6) for e, s in zip(hybrid, best, strict=True))
    assert {hybrid[0].doc_id, hybrid[1].doc_id} == {"p01", "p02"}


async def test_filters_restrict_results_and_bad_keys_are_refused(tool: VectorSearchTool) -> None:
    ev = await tool.search("engine", k=5, filters={"doc_id": "p02"})
    assert [e.doc_id for e in ev] == ["p02"]
    assert await tool.search("engine", k=5, filters={"doc_id": "no-such-doc"}) == []
    assert {e.source for e in await tool.search("engine", k=5, filters={"source": "corpus:passages.jsonl"})} == {
        "corpus:passages.jsonl"
    }
    with pytest.raises(ToolError, match="cannot filter on"):
        await tool.search("engine", filters={"text": "x"})


async def test_hidden_points_are_never_returned(
    tool: VectorSearchTool, indexed: QdrantStore | EdgeStore, embedder: Embedder
) -> None:
    text = "Zanzibar quokka telemetry"
    hidden = VectorPoint(
        id="00000000-0000-4000-8000-000000000001",
        dense=embedder.embed([text])[0],
        sparse=BM25Encoder().encode_document(text),
        payload={"doc_id": "hidden", "chunk_id": "c_hidden", "text": text, "live": False},
    )
    indexed.upsert(TENANT, [hidden])
    try:
        for mode in ("hybrid", "dense", "sparse"):
            ev = await tool.search(text, k=24, mode=mode)  # type: ignore[arg-type]
            assert "hidden" not in {e.doc_id for e in ev}
    finally:
        indexed.delete_ids(TENANT, [hidden.id])


async def test_bad_queries_get_tool_errors_and_stop_words_fall_back_to_dense(tool: VectorSearchTool) -> None:
    with pytest.raises(ToolError, match="non-empty"):
        await tool.search("   ")
    with pytest.raises(ToolError, match="unknown search mode"):
        await tool.search("owls", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(ToolError, match="at least 1"):
        await tool.search("owls", k=0)
    assert await tool.search("the of and", mode="sparse") == []
    assert len(await tool.search("the of and", k=2)) == 2


async def test_unknown_tenant_finds_nothing_and_bad_tenant_is_refused(
    indexed: QdrantStore | EdgeStore, embedder: Embedder
) -> None:
    assert await VectorSearchTool(embedder, indexed, "nobody").search("owls") == []
    with pytest.raises(ToolError, match="tenant"):
        await VectorSearchTool(embedder, indexed, "../etc").search("owls")


async def test_langchain_retriever(tool: VectorSearchTool) -> None:
    retriever = VectorSearchRetriever(tool=tool, k=2)
    docs = retriever.invoke("stainless steel hinge bracket")
    assert docs[0].metadata["doc_id"] == "p06" and "hinge" in docs[0].page_content and len(docs) == 2
    adocs = await retriever.ainvoke("largest hot desert")
    assert adocs[0].metadata["doc_id"] == "p22"


def test_no_registry_one_client_per_path_and_dimension_mismatch(settings: Settings) -> None:
    first = open_vector_store(settings)
    with pytest.raises(VectorStoreError, match="cannot open the vector store"):
        open_vector_store(settings)  # one client per data dir (either engine): a process opens it once, passes it
    first.ensure_tenant("t", 384)
    with pytest.raises(VectorStoreError, match="384-dimensional"):
        first.ensure_tenant("t", 768)
    first.close()
    first.close()  # closing twice is harmless
    second = open_vector_store(settings)
    assert second is not first
    with pytest.raises(VectorStoreError, match="384-dimensional"):  # the collection outlived the first client
        second.ensure_tenant("t", 768)
    second.close()
