"""An ingest is atomic across every store: vectors (Qdrant local), graph (real FalkorDB), trees (SQLite), manifest.

A sink that refuses a document, or a process killed with -9 mid-replace, leaves every store on the
old version (then a re-run matches a clean run), and DELETE removes a document's orphans everywhere.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from knowledge.embeddings import Embedder
from knowledge.ingest import Ingestor, IngestSink
from knowledge.kg.blocking import BlockingGraphSink
from knowledge.kg.falkordb_server import FalkorDBServer
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.kg.fast_extractor import FastExtractor
from knowledge.models import Chunk, Document
from knowledge.settings import Settings
from knowledge.trees import TreeStore
from knowledge.trees.sink import TreeSink
from knowledge.vector_store import VectorStore, open_vector_store

REPO = Path(__file__).resolve().parents[2]

V1 = [
    Document(id="a", title="Owls", text="Ada Venn watched Barn Owls hunt mice near Harrow Point.", source="mem:a"),
    Document(id="b", title="Voles", text="Field Voles dig burrows under Kettle Hill.", source="mem:b"),
]
V2 = [
    Document(id="a", title="Owls", text="Mara Quen saw Tawny Owls swallow prey whole at Gull Rock.", source="mem:a"),
    V1[1],
    Document(id="c", title="Mice", text="Wood Mice hide in hedges around Saltmarsh Farm.", source="mem:c"),
]


class Refuse:
    """A sink that refuses one document version (after the sinks before it took it), as on content it cannot parse."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        if doc == self.doc:
            raise RuntimeError(f"cannot take {doc.id}")

    def delete(self, tenant: str, doc_id: str) -> None:
        return None


@pytest.fixture(scope="module")
def falkordb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FalkorDBServer]:
    server = FalkorDBServer(tmp_path_factory.mktemp("fk"))
    server.start()
    yield server
    server.stop()


@dataclass
class Stores:
    settings: Settings
    vectors: VectorStore
    trees: TreeStore
    port: int

    opened: list[BlockingGraphSink] = field(default_factory=list)

    def ingestor(self, embedder: Embedder, *extra: IngestSink) -> Ingestor:
        """An ingestor over every store, with a fresh graph sink (the extractor learns titles as it goes)."""
        port = self.port
        graph = BlockingGraphSink(lambda: FalkorDBStore("127.0.0.1", port), FastExtractor())
        self.opened.append(graph)
        return Ingestor(self.settings, embedder, self.vectors, sinks=[graph, TreeSink(self.trees), *extra])

    def state(self, tenant: str, ing: Ingestor) -> dict[str, Any]:
        """Everything of a tenant in every store, tenant-independent (so two tenants compare)."""
        payloads = list(self.vectors.points(tenant).values())
        vectors = sorted((str(p["doc_id"]), str(p["chunk_id"]), bool(p["live"])) for p in payloads)
        trees = {d: t.content_hash for d, _ in self.trees.documents(tenant) if (t := self.trees.tree(tenant, d))}
        return {
            "vectors": vectors,
            "graph": _graph(self.port, tenant),
            "trees": trees,
            "manifest": {e.doc_id: e.content_hash for e in ing.manifest.committed(tenant)},
            "pending": [e.doc_id for e in ing.manifest.pending(tenant)],
        }

    def close(self) -> None:
        for graph in self.opened:
            graph.close()
        self.trees.close()
        self.vectors.close()


def _graph(port: int, tenant: str) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        store = FalkorDBStore("127.0.0.1", port)
        params = {"tenant": tenant}
        try:
            chunks = await store._run(tenant, "MATCH (c:Chunk {tenant: $tenant}) RETURN c.id, c.doc_id", params)
            entities = await store._run(tenant, "MATCH (e:Entity {tenant: $tenant}) RETURN e.key", params)
            mentions = await store._run(
                tenant, "MATCH (e:Entity {tenant: $tenant})-[m:MENTIONED_IN]->(c:Chunk) RETURN e.key, c.id", params
            )
        finally:
            await store.aclose()
        return {
            "chunks": sorted(tuple(r) for r in chunks),
            "entities": sorted(r[0] for r in entities),
            "mentions": sorted(tuple(r) for r in mentions),
        }

    return asyncio.run(read())


def _open(data_dir: Path, port: int) -> Stores:
    settings = Settings(data_dir=data_dir)
    return Stores(
        settings=settings,
        vectors=open_vector_store(settings),
        trees=TreeStore(settings.path("trees.sqlite")),
        port=port,
    )


@pytest.fixture
def stores(tmp_path: Path, falkordb: FalkorDBServer) -> Iterator[Stores]:
    s = _open(tmp_path / "data", falkordb.port)
    yield s
    s.close()


def _clean(stores: Stores, embedder: Embedder, tenant: str, *steps: list[Document]) -> dict[str, Any]:
    ing = stores.ingestor(embedder)
    for docs in steps:
        ing.ingest_documents(docs, tenant)
    state = stores.state(tenant, ing)
    ing.close()
    return state


def test_a_refusing_sink_leaves_every_store_on_the_old_version(stores: Stores, embedder: Embedder) -> None:
    expected = _clean(stores, embedder, "ref1", V1, [V1[0], V1[1], V2[2]])
    ing = stores.ingestor(embedder)
    ing.ingest_documents(V1, "t1")
    ing.sinks.append(Refuse(V2[0]))  # after the graph and the trees took the new version
    report = ing.ingest_documents(V2, "t1")
    assert [f.source for f in report.failed] == ["mem:a"] and report.added == ["c"]
    assert stores.state("t1", ing) == expected
    ing.close()


def test_a_refused_new_document_leaves_no_trace_in_any_store(stores: Stores, embedder: Embedder) -> None:
    expected = _clean(stores, embedder, "ref2", V1[1:])
    ing = stores.ingestor(embedder, Refuse(V1[0]))
    report = ing.ingest_documents(V1, "t2")
    assert [f.source for f in report.failed] == ["mem:a"]
    assert stores.state("t2", ing) == expected
    ing.close()


_CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from test_ingest_atomic import V1, V2, _open
from knowledge.embeddings.local import LocalEmbedder

class Stall:
    def upsert(self, tenant, doc, chunks):
        if doc.id == "a":
            Path(sys.argv[2]).write_text("stalled")
            time.sleep(600)
    def delete(self, tenant, doc_id):
        pass

stores = _open(Path(sys.argv[1]), int(sys.argv[4]))
ing = stores.ingestor(LocalEmbedder(batch_size=32))
ing.ingest_documents(V1, "t")
ing.sinks.append(Stall())
ing.ingest_documents(V2, "t")
"""


def test_kill_9_mid_replace_then_recovery_and_rerun_match_a_clean_run(
    tmp_path: Path, falkordb: FalkorDBServer, embedder: Embedder
) -> None:
    ref = _open(tmp_path / "ref", falkordb.port)
    expected = _clean(ref, embedder, "ref3", V1, V2)
    ref.close()
    data, marker = tmp_path / "crash", tmp_path / "stalled"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(data), str(marker), str(Path(__file__).parent), str(falkordb.port)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert child.poll() is None, "the child died before the stall"
            assert time.monotonic() < deadline, "the child never reached the stall"
            time.sleep(0.1)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    stores = _open(data, falkordb.port)
    try:
        ing = stores.ingestor(embedder)
        mid = stores.state("t", ing)
        assert sorted(mid["pending"]) == ["a", "c"]
        assert ing.recover("t") == 2
        after = stores.state("t", ing)
        v1_only = _open(tmp_path / "v1", falkordb.port)
        assert after == _clean(v1_only, embedder, "ref4", V1), "recovery did not bring every store back to v1"
        v1_only.close()
        ing.ingest_documents(V2, "t")
        assert stores.state("t", ing) == expected
        ing.close()
    finally:
        stores.close()


def test_delete_removes_orphans_from_every_store(stores: Stores, embedder: Embedder) -> None:
    ing = stores.ingestor(embedder)
    ing.ingest_documents(V1, "t5")
    ing.manifest.remove("t5", "a")  # an orphan, as an older version could leave one
    assert ing.delete_document("a", "t5") is True
    state = stores.state("t5", ing)
    assert {d for d, _, _ in state["vectors"]} == {"b"} and set(state["trees"]) == {"b"}
    assert {d for _, d in state["graph"]["chunks"]} == {"b"}
    assert ing.delete_document("a", "t5") is False
    ing.close()


def test_a_manifest_of_the_first_schema_is_upgraded_in_place(tmp_path: Path) -> None:
    import sqlite3

    from knowledge.manifest import Manifest

    path = tmp_path / "manifest.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE documents (tenant TEXT NOT NULL, doc_id TEXT NOT NULL, title TEXT NOT NULL, source TEXT NOT NULL,"
        " content_hash TEXT, point_ids TEXT NOT NULL DEFAULT '[]', pending_hash TEXT,"
        " pending_point_ids TEXT NOT NULL DEFAULT '[]', chunks INTEGER NOT NULL DEFAULT 0,"
        " updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (tenant, doc_id))"
    )
    db.execute("INSERT INTO documents (tenant, doc_id, title, source, content_hash) VALUES ('t', 'a', 'A', 's', 'h')")
    db.commit()
    db.close()
    manifest = Manifest(path)
    entry = manifest.get("t", "a")
    assert entry is not None and entry.content_hash == "h" and entry.document is None
    manifest.close()


class Down:
    """A sink whose backend is down (every call fails) until ``up`` is set."""

    def __init__(self) -> None:
        self.up = False
        self.docs: dict[str, str] = {}

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        if not self.up:
            raise ConnectionError("backend down")
        self.docs[doc.id] = doc.text

    def delete(self, tenant: str, doc_id: str) -> None:
        if not self.up:
            raise ConnectionError("backend down")
        self.docs.pop(doc_id, None)


def test_a_sink_down_during_the_undo_is_restored_by_the_next_ingest(stores: Stores, embedder: Embedder) -> None:
    down = Down()
    down.up = True
    ing = stores.ingestor(embedder, down)
    ing.ingest_documents(V1, "t6")
    before = stores.state("t6", ing)
    down.up = False
    report = ing.ingest_documents([V2[0]], "t6")
    assert [f.source for f in report.failed] == ["mem:a"] and "restored on the next ingest" in report.failed[0].error
    assert [v for v in stores.state("t6", ing)["vectors"] if v[0] == "a"] == [
        v for v in before["vectors"] if v[0] == "a"
    ]
    assert ing.manifest.pending("t6")  # the graph and trees may hold the refused version: not done yet
    down.up = True
    assert ing.ingest_documents([V1[1]], "t6").unchanged == ["b"]  # recovery ran first
    assert stores.state("t6", ing) == before and down.docs == {"a": V1[0].text, "b": V1[1].text}
    ing.close()


def test_a_corpus_line_nested_too_deeply_is_a_per_line_error(
    stores: Stores, embedder: Embedder, tmp_path: Path
) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b"[" * 100_000 + b"\n" + b'{"id": "ok", "title": "Owl", "text": "Owls hunt."}\n')
    ing = stores.ingestor(embedder)
    report = ing.ingest_corpus(corpus, "t7", name="c.jsonl")
    assert report.added == ["ok"] and [(f.source, f.error) for f in report.failed] == [
        ("c.jsonl:1", "malformed JSON: nested too deeply")
    ]
    ing.close()


class Crash(BaseException):
    """The process dying: not an ``Exception``, so nothing in the pipeline catches it."""


def test_a_crash_after_the_old_version_was_dropped_is_finished_not_lost(
    stores: Stores, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _clean(stores, embedder, "ref8", V1, V2[:2])
    ing = stores.ingestor(embedder)
    ing.ingest_documents(V1, "t8")
    with monkeypatch.context() as m:

        def crash(tenant: str, ids: Sequence[str]) -> None:
            raise Crash("killed while deleting the old points")

        m.setattr(stores.vectors, "delete_ids", crash)
        with pytest.raises(Crash):
            ing.ingest_documents(V2[:2], "t8")
    ing.close()
    rerun = stores.ingestor(embedder)  # a fresh process: recovery runs first
    assert rerun.recover("t8") == 1
    assert stores.state("t8", rerun) == expected  # the new version of a everywhere, nothing lost
    assert rerun.ingest_documents(V2[:2], "t8").unchanged == ["a", "b"]
    rerun.close()
