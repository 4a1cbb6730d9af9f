"""The ``VectorStore`` contract, run on both tenancy layouts (collection per tenant, payload-partitioned).

Both embedded engines always run (Qdrant Edge, the default, and qdrant-client local mode); the same tests run
against a Qdrant server when ``WAYPOINT_QDRANT_URL`` is set (each run uses its own tenant names, and the server's
shared collection is left with no points of them).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.embeddings import Embedder
from knowledge.ingest import Ingestor
from knowledge.settings import QdrantConfig, Settings
from knowledge.sparse import SparseVector
from knowledge.vector_store import (
    BadFilterError,
    BadTenantError,
    EdgeStore,
    QdrantStore,
    VectorPoint,
    VectorStoreError,
    engine_conflict,
    open_vector_store,
)
from knowledge.vector_store.edge import STATE
from knowledge.vector_store.layout import POINT_ID_KEY, SHARED_COLLECTION, TENANT_KEY, PayloadPartitioned
from tools.vector_search import VectorSearchTool

SERVER = os.environ.get("WAYPOINT_QDRANT_URL")
HAS_EDGE = importlib.util.find_spec("qdrant_edge") is not None
BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("edge", id="edge", marks=pytest.mark.skipif(not HAS_EDGE, reason="needs qdrant-edge-py")),
    pytest.param(
        "server",
        id="server",
        marks=[pytest.mark.qdrant_server, pytest.mark.skipif(not SERVER, reason="needs WAYPOINT_QDRANT_URL")],
    ),
]


@pytest.fixture(params=["collection", "payload"])
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=BACKENDS)
def vstore(request: pytest.FixtureRequest, layout: str, tmp_path: Path) -> Iterator[QdrantStore | EdgeStore]:
    url = SERVER if request.param == "server" else None
    engine = "edge" if request.param == "edge" else "local"
    settings = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(url=url, layout=layout, engine=engine))
    store = open_vector_store(settings)
    if url and layout == "payload":  # a server outlives the test: a shared collection of this run only
        store.layout = PayloadPartitioned(f"waypoint_test_{uuid.uuid4().hex[:8]}")
    yield store
    if url and layout == "payload":
        assert isinstance(store, QdrantStore)
        store.client.delete_collection(store.collection("any"))
    store.close()


@pytest.fixture
def tenants(vstore: QdrantStore | EdgeStore) -> Iterator[tuple[str, str]]:
    run = uuid.uuid4().hex[:8]
    a, b = f"ta-{run}", f"tb-{run}"
    yield a, b
    for t in (a, b):
        vstore.drop_tenant(t)


def _point(pid: str, doc_id: str, dense: list[float], term: int, **extra: str) -> VectorPoint:
    payload = {"doc_id": doc_id, "source": f"{doc_id}.txt", "chunk_id": f"{doc_id}#0", "live": False, **extra}
    return VectorPoint(id=pid, dense=dense, sparse=SparseVector([term], [1.0]), payload=payload)


def _ids(n: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(n)]


def test_layout_is_what_the_setting_says(
    vstore: QdrantStore | EdgeStore, layout: str, tenants: tuple[str, str]
) -> None:
    a, b = tenants
    assert vstore.layout.name == layout
    if layout == "payload":
        assert vstore.collection(a) == vstore.collection(b)
        assert vstore.collection(a) == SHARED_COLLECTION or vstore.collection(a).startswith("waypoint_test_")
    else:
        assert vstore.collection(a) != vstore.collection(b)


def test_tenants_are_isolated_in_search_count_and_delete(
    vstore: QdrantStore | EdgeStore, tenants: tuple[str, str]
) -> None:
    a, b = tenants
    for t in tenants:
        vstore.ensure_tenant(t, 4)
    pa, pb = _ids(2), _ids(2)
    vstore.upsert(a, [_point(pa[0], "d1", [1, 0, 0, 0], 7), _point(pa[1], "d2", [0, 1, 0, 0], 8)])
    vstore.upsert(b, [_point(pb[0], "d1", [1, 0, 0, 0], 7), _point(pb[1], "d3", [0, 0, 1, 0], 9)])
    assert vstore.count(a) == 2 and vstore.count(b) == 2
    assert vstore.search(a, dense=[1, 0, 0, 0], sparse=None, mode="dense") == []  # nothing live yet
    vstore.set_live(a, pa)
    vstore.set_live(b, pb)

    hits = vstore.search(a, dense=[1, 0, 0, 0], sparse=None, mode="dense", k=10)
    assert [h.id for h in hits] == [pa[0], pa[1]]  # the caller's ids, only tenant a's points
    assert hits[0].payload["doc_id"] == "d1"
    assert TENANT_KEY not in hits[0].payload and POINT_ID_KEY not in hits[0].payload
    hybrid = vstore.search(b, dense=[0, 0, 1, 0], sparse=SparseVector([9], [1.0]), k=10)
    assert {h.id for h in hybrid} == set(pb) and hybrid[0].id == pb[1]
    sparse = vstore.search(b, dense=None, sparse=SparseVector([8], [1.0]), mode="sparse", k=10)
    assert sparse == []  # term 8 is only in tenant a

    vstore.delete_doc(a, "d1")  # the same doc id in tenant b is untouched
    assert vstore.count(a) == 1 and vstore.count(b, doc_id="d1") == 1
    vstore.delete_ids(a, [pb[1]])  # another tenant's id deletes nothing
    assert vstore.count(b) == 2
    vstore.drop_tenant(a)
    assert vstore.count(a) == 0 and vstore.count(b, live=True) == 2
    assert [h.id for h in vstore.search(b, dense=[1, 0, 0, 0], sparse=None, mode="dense", k=1)] == [pb[0]]


def test_same_point_id_in_two_tenants_does_not_overwrite(
    vstore: QdrantStore | EdgeStore, tenants: tuple[str, str]
) -> None:
    a, b = tenants
    for t in tenants:
        vstore.ensure_tenant(t, 4)
    pid = str(uuid.uuid4())
    vstore.upsert(a, [_point(pid, "da", [1, 0, 0, 0], 1)])
    vstore.upsert(b, [_point(pid, "db", [0, 1, 0, 0], 2)])
    vstore.set_live(a, [pid])
    assert vstore.count(a, live=True) == 1 and vstore.count(b, live=False) == 1
    assert vstore.search(a, dense=[1, 0, 0, 0], sparse=None, mode="dense")[0].payload["doc_id"] == "da"
    vstore.set_live(b, [pid])
    assert vstore.search(b, dense=[1, 0, 0, 0], sparse=None, mode="dense")[0].payload["doc_id"] == "db"


def test_filters_combine_with_the_tenant(vstore: QdrantStore | EdgeStore, tenants: tuple[str, str]) -> None:
    a, b = tenants
    for t in tenants:
        vstore.ensure_tenant(t, 4)
    pa, pb = _ids(2), _ids(1)
    vstore.upsert(a, [_point(pa[0], "x", [1, 0, 0, 0], 1), _point(pa[1], "y", [1, 0, 0, 0], 1)])
    vstore.upsert(b, [_point(pb[0], "x", [1, 0, 0, 0], 1)])
    vstore.set_live(a, pa)
    vstore.set_live(b, pb)
    hits = vstore.search(a, dense=[1, 0, 0, 0], sparse=None, mode="dense", k=10, filters={"doc_id": "x"})
    assert [h.id for h in hits] == [pa[0]]
    with pytest.raises(BadFilterError):
        vstore.search(a, dense=[1, 0, 0, 0], sparse=None, filters={"tenant": b})  # cannot widen to another tenant


def test_points_lists_a_tenants_points_under_the_callers_ids(
    vstore: QdrantStore | EdgeStore, tenants: tuple[str, str]
) -> None:
    a, b = tenants
    assert vstore.points(a) == {}  # no collection yet
    for t in tenants:
        vstore.ensure_tenant(t, 4)
    pa, pb = _ids(300), _ids(1)  # more than one scroll page
    vstore.upsert(a, [_point(pid, f"d{i}", [1, 0, 0, 0], 1) for i, pid in enumerate(pa)])
    vstore.upsert(b, [_point(pb[0], "db", [0, 1, 0, 0], 2)])
    vstore.set_live(a, pa[:1])
    got = vstore.points(a)
    assert set(got) == set(pa) and got[pa[0]]["live"] is True and got[pa[1]]["live"] is False
    assert got[pa[7]]["doc_id"] == "d7" and set(got[pa[7]]) == {"doc_id", "source", "chunk_id", "live"}
    assert list(vstore.points(b)) == pb


def test_bad_tenant_and_wrong_dimension_are_refused(vstore: QdrantStore | EdgeStore, tenants: tuple[str, str]) -> None:
    a, _ = tenants
    with pytest.raises(BadTenantError):
        vstore.ensure_tenant("../etc", 4)
    with pytest.raises(BadTenantError):
        vstore.count("a b")
    vstore.ensure_tenant(a, 4)
    with pytest.raises(Exception, match="4-dimensional"):
        vstore.ensure_tenant(a, 8)


def _points_in(store: QdrantStore | EdgeStore, collection: str) -> int:
    """Every point of a collection, whatever tenant (read past the store's tenant scoping)."""
    if isinstance(store, QdrantStore):
        return store.client.count(collection, exact=True).count
    shard = store._shard(collection)
    return 0 if shard is None else int(shard.count(store.qe.CountRequest(exact=True)))


EMBEDDED = [
    pytest.param("edge", id="edge", marks=pytest.mark.skipif(not HAS_EDGE, reason="needs qdrant-edge-py")),
    pytest.param("local", id="local"),
]


@pytest.mark.parametrize("engine", EMBEDDED)
async def test_ingest_and_search_two_tenants_in_one_collection(
    tmp_path: Path, embedder: Embedder, corpus_path: Path, engine: str
) -> None:
    """The real ingest path on the payload layout: two tenants share a collection, each finds only its own."""
    qdrant = QdrantConfig(layout="payload", engine=engine)
    settings = Settings(data_dir=tmp_path / "data", qdrant=qdrant)
    store = open_vector_store(settings)
    assert isinstance(store, EdgeStore if engine == "edge" else QdrantStore)
    ing = Ingestor(settings, embedder, store)
    try:
        assert len(ing.ingest_corpus(corpus_path, "alpha").added) == 24
        assert len(ing.ingest_corpus(corpus_path, "beta").added) == 24
        assert store.collection("alpha") == store.collection("beta")
        assert _points_in(store, SHARED_COLLECTION) == 48
        assert ing.delete_document("p06", "alpha")
        alpha, beta = VectorSearchTool(embedder, store, "alpha"), VectorSearchTool(embedder, store, "beta")
        assert "p06" not in {e.doc_id for e in await alpha.search("XK-4471", k=5)}
        assert (await beta.search("XK-4471", k=1))[0].doc_id == "p06"
        assert (await beta.search("deepest lake", k=1, mode="dense"))[0].doc_id == "p05"
        assert store.count("alpha") == 23 and store.count("beta") == 24
    finally:
        ing.close()
        store.close()


@pytest.mark.skipif(not HAS_EDGE, reason="needs qdrant-edge-py")
async def test_edge_engine_ingests_searches_and_persists_across_reopen(
    tmp_path: Path, embedder: Embedder, corpus_path: Path
) -> None:
    """The real ingest path on Qdrant Edge (the default): hidden until live, found by every mode, still there after a
    reopen."""
    assert QdrantConfig().engine == "edge"  # the default (explicit below: WAYPOINT_QDRANT_ENGINE may be set)
    settings = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(engine="edge"))
    store = open_vector_store(settings)
    assert isinstance(store, EdgeStore)
    ing = Ingestor(settings, embedder, store)
    try:
        assert len(ing.ingest_corpus(corpus_path, "alpha").added) == 24
        assert store.count("alpha", live=True) == 24 and store.count("alpha", live=False) == 0
        tool = VectorSearchTool(embedder, store, "alpha")
        for mode in ("sparse", "hybrid"):
            assert (await tool.search("XK-4471", k=1, mode=mode))[0].doc_id == "p06"
        assert (await tool.search("deepest lake", k=1, mode="dense"))[0].doc_id == "p05"
        assert "_state" not in (await tool.search("deepest lake", k=1))[0].model_dump()
        assert ing.delete_document("p06", "alpha") and store.count("alpha") == 23
    finally:
        ing.close()
        store.close()
    again = open_vector_store(settings)
    try:
        assert again.count("alpha") == 23
        hits = again.search("alpha", dense=embedder.embed(["deepest lake"])[0], sparse=None, mode="dense", k=1)
        assert hits[0].payload["doc_id"] == "p05" and hits[0].payload["live"] is True
    finally:
        again.close()


@pytest.mark.skipif(not HAS_EDGE, reason="needs qdrant-edge-py")
def test_a_data_dir_of_one_engine_is_refused_by_the_other(tmp_path: Path) -> None:
    local = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(engine="local"))
    edge = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(engine="edge"))  # the default, on an older dir
    store = open_vector_store(local)
    store.ensure_tenant("t", 4)
    store.close()
    with pytest.raises(VectorStoreError, match="WAYPOINT_QDRANT_ENGINE=local") as refused:
        open_vector_store(edge)
    assert "'edge' engine (the default)" in str(refused.value) and "re-ingest" in str(refused.value)
    assert engine_conflict(edge) == str(refused.value) and engine_conflict(local) is None
    fresh = Settings(data_dir=tmp_path / "fresh", qdrant=QdrantConfig(engine="edge"))
    other = open_vector_store(fresh)
    other.ensure_tenant("t", 4)
    other.close()
    with pytest.raises(VectorStoreError, match="WAYPOINT_QDRANT_ENGINE=edge"):
        open_vector_store(fresh.model_copy(update={"qdrant": QdrantConfig(engine="local")}))
    open_vector_store(edge.model_copy(update={"data_dir": tmp_path / "empty"})).close()  # nothing indexed: fine


@pytest.mark.skipif(not HAS_EDGE, reason="needs qdrant-edge-py")
def test_edge_refuses_a_second_process_on_its_data_dir(tmp_path: Path) -> None:
    """Edge has no multi-process sharing: another process opening the same data dir is refused at open."""
    settings = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(engine="edge"))
    probe = (
        "import sys\n"
        "from knowledge.settings import QdrantConfig, Settings\n"
        "from knowledge.vector_store import VectorStoreError, open_vector_store\n"
        "s = Settings(data_dir=sys.argv[1], qdrant=QdrantConfig(engine='edge'))\n"
        "try:\n    open_vector_store(s).close()\nexcept VectorStoreError as e:\n    print(e)\n    sys.exit(3)\n"
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}

    def other_process() -> subprocess.CompletedProcess[str]:
        args = [sys.executable, "-c", probe, str(settings.data_dir)]
        return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)

    store = open_vector_store(settings)
    try:
        store.ensure_tenant("t", 4)
        refused = other_process()
        assert refused.returncode == 3, refused.stderr
        assert "cannot open the vector store" in refused.stdout and "WAYPOINT_QDRANT_URL" in refused.stdout
    finally:
        store.close()
    assert other_process().returncode == 0  # released on close


def test_equal_scores_give_the_same_list_every_time(vstore: QdrantStore | EdgeStore, tenants: tuple[str, str]) -> None:
    """Ties (here: identical vectors; in hybrid search, RRF's rank 1 + 2 against 2 + 1) are cut the same way on
    every query, so one question always gets one answer's evidence (Edge: ties go by id)."""
    a, _ = tenants
    vstore.ensure_tenant(a, 4)
    ids = _ids(12)
    vstore.upsert(a, [_point(pid, f"d{n}", [1, 0, 0, 0], 7) for n, pid in enumerate(ids)])
    vstore.set_live(a, ids)
    for mode in ("dense", "sparse", "hybrid"):
        runs = [
            [h.id for h in vstore.search(a, dense=[1, 0, 0, 0], sparse=SparseVector([7], [1.0]), mode=mode, k=3)]
            for _ in range(6)
        ]
        assert len(runs[0]) == 3 and all(r == runs[0] for r in runs), mode
        if isinstance(vstore, EdgeStore):
            assert runs[0] == sorted(ids)[:3], mode


@pytest.mark.skipif(not HAS_EDGE, reason="needs qdrant-edge-py")
def test_the_shared_edge_collection_indexes_the_tenant_key(tmp_path: Path) -> None:
    """Without the index a filtered query scores every tenant's points (258 ms p50 at 100 x 1k, 6 ms with it:
    docs/bench/tenancy_edge.md); a collection per tenant needs none. Both index the visibility key every search
    filters on (~1.1 s against ~50 ms at 52k points: docs/bench/scale.md)."""
    for layout, expected in (("payload", {TENANT_KEY, STATE}), ("collection", {STATE})):
        settings = Settings(data_dir=tmp_path / layout, qdrant=QdrantConfig(layout=layout, engine="edge"))
        store = open_vector_store(settings)
        try:
            assert isinstance(store, EdgeStore)
            store.ensure_tenant("ta", 4)
            shard = store._shard(store.collection("ta"))
            assert set(shard.info().payload_schema) == expected
        finally:
            store.close()


def test_an_edge_shard_made_before_the_visibility_index_gets_it_on_open(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, qdrant=QdrantConfig(layout="collection", engine="edge"))
    pid = str(uuid.uuid4())
    store = open_vector_store(settings)
    assert isinstance(store, EdgeStore)
    store.ensure_tenant("ta", 4)
    store.upsert(
        "ta",
        [
            VectorPoint(
                id=pid, dense=[1.0, 0, 0, 0], sparse=SparseVector([1], [1.0]), payload={"doc_id": "d", "live": True}
            )
        ],
    )
    shard = store._shard(store.collection("ta"))
    shard.update(store.qe.UpdateOperation.delete_field_index(STATE))  # as an older Waypoint left it
    assert STATE not in shard.info().payload_schema
    store.close()
    store = open_vector_store(settings)
    try:
        assert isinstance(store, EdgeStore)  # a search alone opens the shard (no ingest, no ensure_tenant)
        assert [h.id for h in store.search("ta", dense=[1.0, 0, 0, 0], sparse=None, mode="dense", k=1)] == [pid]
        assert STATE in store._shard(store.collection("ta")).info().payload_schema
    finally:
        store.close()


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("tenancy", ["collection", "payload"])
async def test_missing_words_are_the_words_no_live_passage_of_the_tenant_has(
    tmp_path: Path, embedder: Embedder, corpus_path: Path, engine: str, tenancy: str
) -> None:
    """``missing_words`` and ``most_together`` (the lexical "not found"): a sparse search for a word alone finds only
    passages holding it, on both engines and layouts; another tenant's words, a deleted document's and unknown ones
    are missing; words held together are counted in the passages themselves."""
    settings = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(layout=tenancy, engine=engine))
    store = open_vector_store(settings)
    ing = Ingestor(settings, embedder, store)
    try:
        ing.ingest_corpus(corpus_path, "alpha")
        ing.ingest_corpus(corpus_path, "beta")
        alpha, beta = VectorSearchTool(embedder, store, "alpha"), VectorSearchTool(embedder, store, "beta")
        words = ["lovelace", "babbage", "radioactivity", "mongolia", "log_compression", "xk"]
        assert await alpha.missing_words(words) == {"mongolia", "log_compression"}
        assert await alpha.missing_words(["the", ""]) == set()  # stop words and nothing are never missing
        assert await alpha.most_together(["ada", "lovelace", "babbage"]) == 3  # p01 names all three
        assert await alpha.most_together(["lovelace", "radioactivity"]) == 1  # two passages, never one
        assert await alpha.most_together(["mongolia"]) == 0
        ing.delete_document("p01", "alpha")  # Ada Lovelace: no other passage names "lovelace"
        assert await alpha.missing_words(["lovelace", "babbage"]) == {"lovelace"}
        assert await beta.missing_words(["lovelace"]) == set()  # the other tenant still has it
        assert await VectorSearchTool(embedder, store, "nobody").missing_words(["babbage"]) == {"babbage"}
    finally:
        ing.close()
        store.close()


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("tenancy", ["collection", "payload"])
async def test_document_passages_counts_a_documents_live_chunks_in_its_tenant(
    tmp_path: Path, embedder: Embedder, corpus_path: Path, engine: str, tenancy: str
) -> None:
    """``document_passages`` (how long a hit's document is, for the section rule): a corpus passage is one chunk, a
    manual with sections as many as ingestion stored for it, an unknown or deleted document none, and another
    tenant's documents are not counted."""
    settings = Settings(data_dir=tmp_path / "data", qdrant=QdrantConfig(layout=tenancy, engine=engine))
    manual = tmp_path / "manual.md"
    body = " ".join(f"word{i}" for i in range(60))
    manual.write_text("# Manual\n\n" + "".join(f"## Part {n}\n\n{body} part{n}.\n\n" for n in range(4)))
    store = open_vector_store(settings)
    ing = Ingestor(settings, embedder, store)
    try:
        ing.ingest_corpus(corpus_path, "alpha")
        ing.ingest_paths([manual], "alpha")
        alpha = VectorSearchTool(embedder, store, "alpha")
        (doc_id,) = {p["doc_id"] for p in store.points("alpha").values() if p.get("title") == "Manual"}
        stored = sum(1 for p in store.points("alpha").values() if p["doc_id"] == doc_id)
        assert stored >= 4 and await alpha.document_passages(doc_id) == stored  # one chunk a part at least
        assert await alpha.document_passages("p01") == 1
        assert await alpha.document_passages("no-such-doc") == 0
        assert await VectorSearchTool(embedder, store, "beta").document_passages(doc_id) == 0
        ing.delete_document("p01", "alpha")
        assert await alpha.document_passages("p01") == 0
    finally:
        ing.close()
        store.close()
