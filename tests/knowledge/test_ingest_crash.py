"""Crash-safety: a crash at any step of an ingest leaves nothing half-visible, and a re-run ends as a clean run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.embeddings import CachedEmbedder, Embedder, EmbeddingCache
from knowledge.ingest import Ingestor
from knowledge.models import Document
from knowledge.settings import Settings
from knowledge.sparse import BM25Encoder
from knowledge.vector_store import VectorStore, VectorStoreError, open_vector_store

V1 = [
    Document(id="a", title="Owls", text="Owls hunt mice at night.", source="mem:a"),
    Document(id="b", title="Voles", text="Voles dig burrows.", source="mem:b"),
]
V2 = [
    Document(id="a", title="Owls", text="Owls swallow their prey whole and cough up pellets.", source="mem:a"),
    V1[1],
    Document(id="c", title="Mice", text="Mice hide in hedges.", source="mem:c"),
]


class Crash(BaseException):
    """Stands in for the process dying: not an ``Exception``, so nothing in the pipeline catches it."""


def _points(store: VectorStore, tenant: str = "t") -> dict[str, dict[str, Any]]:
    return store.points(tenant)


def _by_doc(points: dict[str, dict[str, Any]], live_only: bool = False) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for pid, p in points.items():
        if p["live"] or not live_only:
            out.setdefault(p["doc_id"], set()).add(pid)
    return out


@pytest.fixture
def clean_final(tmp_path: Path, embedder: Embedder) -> Iterator[dict[str, dict[str, Any]]]:
    """Points after a crash-free v1 then v2 ingest, in a separate data dir (same tenant, so same ids)."""
    settings = Settings(data_dir=tmp_path / "clean")
    store = open_vector_store(settings)
    cache = EmbeddingCache(settings.path("cache.sqlite"))
    ing = Ingestor(settings, CachedEmbedder(embedder, cache), store)
    ing.ingest_documents(V1, "t")
    ing.ingest_documents(V2, "t")
    yield _points(store)
    ing.close()
    cache.close()
    store.close()


def _crash_in(monkeypatch: pytest.MonkeyPatch, obj: object, method: str, *, partial: bool = False) -> None:
    real: Callable[..., Any] = getattr(obj, method)

    def crashing(tenant: str, items: Any = None, *rest: Any) -> None:
        if partial and items:
            real(tenant, items[: len(items) // 2], *rest)  # half the batch reaches the disk, then the process dies
        raise Crash(method)

    monkeypatch.setattr(obj, method, crashing)


@pytest.mark.parametrize(
    ("target", "method", "partial"),
    [
        ("store", "upsert", True),
        ("store", "delete_ids", False),
        ("store", "set_live", False),
        ("manifest", "commit", False),
    ],
)
def test_crash_mid_ingest_is_never_half_visible_and_rerun_matches_clean_run(
    settings: Settings,
    cached_embedder: CachedEmbedder,
    store: VectorStore,
    clean_final: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    method: str,
    partial: bool,
) -> None:
    ing = Ingestor(settings, cached_embedder, store)
    ing.ingest_documents(V1, "t")
    old = _by_doc(_points(store))
    new = _by_doc(clean_final)
    with monkeypatch.context() as m:
        _crash_in(m, store if target == "store" else ing.manifest, method, partial=partial)
        with pytest.raises(Crash):
            ing.ingest_documents(V2, "t")
    for doc_id, live in _by_doc(_points(store), live_only=True).items():
        assert live in (old.get(doc_id), new[doc_id]), f"{doc_id} is half-visible after a crash in {method}"
    hits = store.search("t", dense=None, sparse=BM25Encoder().encode_query("owls voles mice"), mode="sparse", k=10)
    assert hits and all(h.payload["live"] is True for h in hits)
    ing.close()

    rerun = Ingestor(settings, cached_embedder, store)  # a fresh process: recovery runs first
    rerun.ingest_documents(V2, "t")
    assert _points(store) == clean_final
    assert {d.doc_id for d in rerun.list_documents("t")} == {"a", "b", "c"}
    assert not rerun.manifest.pending("t")
    assert rerun.ingest_documents(V2, "t").unchanged == ["a", "b", "c"]
    rerun.close()


def test_crash_before_commit_is_rolled_forward_by_recovery(
    settings: Settings,
    cached_embedder: CachedEmbedder,
    store: VectorStore,
    clean_final: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ing = Ingestor(settings, cached_embedder, store)
    ing.ingest_documents(V1, "t")
    with monkeypatch.context() as m:
        _crash_in(m, ing.manifest, "commit")
        with pytest.raises(Crash):
            ing.ingest_documents(V2, "t")
    assert ing.recover("t") == 2
    assert _points(store) == clean_final
    assert {d.doc_id: d.chunks for d in ing.list_documents("t")} == {"a": 1, "b": 1, "c": 1}
    ing.close()


def test_crash_mid_delete_finishes_on_recovery(
    settings: Settings, cached_embedder: CachedEmbedder, store: VectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ing = Ingestor(settings, cached_embedder, store)
    ing.ingest_documents(V1, "t")
    with monkeypatch.context() as m:
        m.setattr(store, "delete_doc", lambda tenant, doc_id: (_ for _ in ()).throw(Crash("delete_doc")))
        with pytest.raises(Crash):
            ing.delete_document("a", "t")
    assert [d.doc_id for d in ing.list_documents("t")] == ["b"]
    assert ing.recover("t") == 1
    assert set(_by_doc(_points(store))) == {"b"}
    ing.close()


def test_store_error_mid_batch_is_reported_and_leaves_no_orphans(
    settings: Settings, cached_embedder: CachedEmbedder, store: VectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ing = Ingestor(settings, cached_embedder, store)
    ing.ingest_documents(V1, "t")

    def refuse(tenant: str, ids: object) -> None:
        raise VectorStoreError("qdrant set_payload failed: disk full")

    monkeypatch.setattr(store, "set_live", refuse)
    report = ing.ingest_documents(V2, "t")
    monkeypatch.undo()
    assert sorted(f.source for f in report.failed) == ["mem:a", "mem:c"] and report.unchanged == ["b"]
    assert all("disk full" in f.error for f in report.failed)
    points = _points(store)
    assert all(p["live"] for p in points.values())
    assert set(_by_doc(points)) == {"b"}
    assert [d.doc_id for d in ing.list_documents("t")] == ["b"] and not ing.manifest.pending("t")
    ing.close()
