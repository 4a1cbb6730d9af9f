"""Synonym edges (HippoRAG 2): entity names the embedder finds alike are linked after an ingest, survive the
re-ingest of other documents, go with their entities, and carry graph retrieval from one name to the other."""

from __future__ import annotations

import numpy as np
import pytest
from graph_helpers import chunk

from knowledge.embeddings.local import LocalEmbedder
from knowledge.kg import FastExtractor, GraphSink, GraphStore
from knowledge.kg.retrieve import GraphRetriever
from knowledge.kg.schema import SYNONYM
from knowledge.kg.synonyms import SynonymLinker, eligible, synonym_pairs
from knowledge.models import Document


def _unit(*rows: list[float]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_pairs_above_the_threshold_once_each_without_self() -> None:
    vectors = _unit([1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0.98, 0.2])
    pairs = synonym_pairs([0, 1, 2, 3], vectors, threshold=0.9, max_per_entity=10)
    assert [(a, b) for a, b, _ in pairs] == [(0, 1), (2, 3)]
    assert all(0.9 <= s <= 1.0 for _, _, s in pairs)


def test_only_query_rows_look_for_synonyms_and_the_nearest_are_kept() -> None:
    vectors = _unit([1, 0], [0.99, 0.14], [0.97, 0.24], [0, 1])
    pairs = synonym_pairs([0], vectors, threshold=0.5, max_per_entity=1)
    assert [(a, b) for a, b, _ in pairs] == [(0, 1)]
    assert synonym_pairs([3], vectors, threshold=0.9, max_per_entity=5) == []


def test_short_names_take_no_part() -> None:
    assert not eligible("U.S") and not eligible("A-1") and eligible("USSR") and eligible("Rhône")


def _doc(doc_id: str, title: str, text: str) -> Document:
    return Document(id=doc_id, title=title, text=text, source="test")


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder(batch_size=32)


async def _ingest(sink: GraphSink, tenant: str, *docs: Document) -> None:
    for d in docs:
        await sink.upsert(tenant, d, [chunk(d.id + "-0", d.title, d.text, d.id)])
    await sink.finish(tenant)


async def _synonyms(store: GraphStore, tenant: str, key: str) -> dict[str, float]:
    edges = (await store.neighbourhood(tenant, [key])).edges
    return {(e.dst if e.src == key else e.src): e.weight for e in edges if e.predicate == SYNONYM}


async def test_sink_links_synonyms_that_outlive_other_documents(
    store: GraphStore, tenant: str, embedder: LocalEmbedder
) -> None:
    sink = GraphSink(store, FastExtractor(), synonyms=SynonymLinker(embedder, threshold=0.88))
    soviet = _doc("a", "Yuri Gagarin", "Yuri Gagarin was a pilot of the Soviet Union.")
    ussr = _doc("b", "Vostok 1", "Vostok 1 was launched by the USSR with a cosmonaut on board.")
    other = _doc("c", "Lyon", "Lyon is a city in France on the Rhône.")
    await _ingest(sink, tenant, soviet, ussr, other)
    syn = await _synonyms(store, tenant, "soviet union")
    assert list(syn) == ["ussr"] and 0.88 <= syn["ussr"] <= 1.0
    assert await _synonyms(store, tenant, "lyon") == {}

    await _ingest(sink, tenant, _doc("c", "Lyon", "Lyon is a city in France."))  # re-ingest another document
    assert list(await _synonyms(store, tenant, "soviet union")) == ["ussr"]
    await _ingest(sink, tenant, soviet, ussr)  # linking the same pair again sets, does not add
    assert (await _synonyms(store, tenant, "soviet union"))["ussr"] == pytest.approx(syn["ussr"])

    await sink.delete(tenant, "b")  # the USSR entity goes, and its synonym edge with it
    assert await _synonyms(store, tenant, "soviet union") == {}


async def test_graph_retrieval_crosses_a_synonym_edge(store: GraphStore, tenant: str, embedder: LocalEmbedder) -> None:
    docs = [
        _doc("a", "Vostok 1", "Vostok 1 was launched by the USSR with a cosmonaut on board."),
        _doc("b", "Lyon", "Lyon is a city in France on the Rhône."),
        _doc("c", "Paris", "Paris is the capital of France."),
    ]
    question = "Which spacecraft did the Soviet Union launch?"
    plain, linked = f"{tenant}p", f"{tenant}s"
    for t, linker in ((plain, None), (linked, SynonymLinker(embedder, threshold=0.88))):
        await store.setup(t)
        await _ingest(GraphSink(store, FastExtractor(), synonyms=linker), t, *docs)
        await _ingest(  # "Soviet Union" exists as an entity only through this document
            GraphSink(store, FastExtractor(), synonyms=linker),
            t,
            _doc("d", "Cold War", "The Cold War set the United States against the Soviet Union."),
        )
    try:
        retriever = GraphRetriever(store)
        found = {
            t: [c.chunk.doc_id for c in (await retriever.retrieve(t, question, k=5)).chunks] for t in (plain, linked)
        }
        assert "a" not in found[plain]
        assert "a" in found[linked]
    finally:
        for t in (plain, linked):
            await store.drop(t)
