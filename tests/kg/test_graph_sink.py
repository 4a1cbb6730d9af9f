"""The ingestion sink: documents in, graph facts that keep their chunks; replace and delete are exact."""

from __future__ import annotations

from graph_helpers import chunk

from knowledge.kg import FastExtractor, GraphSink, GraphStore
from knowledge.kg.blocking import BlockingGraphSink
from knowledge.kg.falkordb_server import FalkorDBServer
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.models import Document
from tools.graph_search import GraphSearchTool


def _doc(doc_id: str, title: str, text: str) -> Document:
    return Document(id=doc_id, title=title, text=text, source="test")


async def test_upsert_replace_delete(store: GraphStore, tenant: str) -> None:
    sink = GraphSink(store, FastExtractor())
    d1 = _doc("d1", "Tina Arena", "Tina Arena was born in Melbourne. She sang with John Farnham.")
    await sink.upsert(tenant, d1, [chunk("d1-0", d1.title, d1.text, "d1")])
    (arena,) = await store.entities_by_key(tenant, ["tina arena"])
    assert arena.type == "title" and arena.degree == 1
    facts = (await store.neighbourhood(tenant, ["melbourne"])).edges
    assert facts and all(e.chunk_ids == ["d1-0"] for e in facts)

    d1b = _doc("d1", "Tina Arena", "Tina Arena lives in Paris.")
    await sink.upsert(tenant, d1b, [chunk("d1-1", d1b.title, d1b.text, "d1")])
    assert await store.entities_by_key(tenant, ["melbourne"]) == []
    assert [h.key for h in await store.entities_by_key(tenant, ["paris"])] == ["paris"]
    stats = await store.stats(tenant)
    assert stats.chunks == 1

    await sink.delete(tenant, "d1")
    stats = await sink.stats(tenant)
    assert (stats.entities, stats.chunks, stats.relations, stats.mentions) == (0, 0, 0, 0)
    await sink.delete(tenant, "d1")


async def test_graph_evidence_keeps_the_chunks_heading_path(store: GraphStore, tenant: str) -> None:
    """A manual's chunk found through the graph says which section it lies in, as the vector store's copy does:
    section recall, the answerer's context and citations read that path."""
    sink = GraphSink(store, FastExtractor())
    doc = _doc("manual", "Logging HOWTO", "Rotation: the RotatingFileHandler in Berlin rotates logs.")
    under = chunk("manual-0", doc.title, doc.text, doc.id).model_copy(update={"section_path": ["Handlers", "Rotation"]})
    await sink.upsert(tenant, doc, [under])
    found = await GraphSearchTool(store, tenant).search("What rotates logs in Berlin?", k=3)
    assert [(ev.id, ev.section_path) for ev in found] == [("manual-0", ["Handlers", "Rotation"])]


async def test_shared_entity_keeps_the_other_document(store: GraphStore, tenant: str) -> None:
    sink = GraphSink(store, FastExtractor())
    a = _doc("a", "Alpha", "Alpha lives in Berlin.")
    b = _doc("b", "Beta", "Beta also lives in Berlin.")
    for d in (a, b):
        await sink.upsert(tenant, d, [chunk(d.id + "-0", d.title, d.text, d.id)])
    await sink.delete(tenant, "a")
    (berlin,) = await store.entities_by_key(tenant, ["berlin"])
    assert berlin.degree == 1


def test_blocking_sink_works_from_sync_code(falkordb_server: FalkorDBServer, tenant: str) -> None:
    sink = BlockingGraphSink(
        lambda: FalkorDBStore("127.0.0.1", falkordb_server.port, graph_prefix="wptest"), FastExtractor()
    )
    try:
        d = _doc("d", "Gamma", "Gamma met Delta in Rome.")
        sink.upsert(tenant, d, [chunk("d-0", d.title, d.text, "d")])
        assert sink.stats(tenant).entities == 3  # Gamma (title), Delta, Rome
        sink.delete(tenant, "d")
        assert sink.stats(tenant).chunks == 0
    finally:
        sink.close()
        sink.close()
