"""Ingestion against the real embedded Qdrant (the default engine) and the real MiniLM: idempotence, replace,
delete, sinks, bad input."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from knowledge.embeddings import CachedEmbedder
from knowledge.ingest import Ingestor
from knowledge.models import Chunk, Document
from knowledge.settings import Settings
from knowledge.vector_store import VectorStore


def _points(store: VectorStore, tenant: str) -> dict[str, dict[str, object]]:
    """Every point of a tenant: id -> payload."""
    return store.points(tenant)


def _doc(doc_id: str, text: str, title: str = "Note") -> Document:
    return Document(id=doc_id, title=title, text=text, source=f"mem:{doc_id}")


class RecordingSink:
    """A sink that keeps what it was fed (and can be told to refuse one document)."""

    def __init__(self, refuse: str | None = None) -> None:
        self.docs: dict[tuple[str, str], list[str]] = {}
        self.refuse = refuse

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        if doc.id == self.refuse:
            raise RuntimeError(f"cannot take {doc.id}")
        self.docs[(tenant, doc.id)] = [c.id for c in chunks]

    def delete(self, tenant: str, doc_id: str) -> None:
        self.docs.pop((tenant, doc_id), None)


def test_corpus_ingest_is_idempotent(
    ingestor: Ingestor, store: VectorStore, cached_embedder: CachedEmbedder, corpus_path: Path
) -> None:
    first = ingestor.ingest_corpus(corpus_path, "t1")
    assert len(first.added) == 24 and first.chunks == 24 and not first.failed
    assert {d.doc_id for d in ingestor.list_documents("t1")} == {f"p{i:02d}" for i in range(1, 25)}
    before = _points(store, "t1")
    assert len(before) == 24 and all(p["live"] is True for p in before.values())
    misses = cached_embedder.misses
    again = ingestor.ingest_corpus(corpus_path, "t1")
    assert len(again.unchanged) == 24 and not again.added and not again.replaced and again.chunks == 0
    assert cached_embedder.misses == misses
    assert _points(store, "t1") == before


def test_changed_document_replaces_exactly_its_own_points(ingestor: Ingestor, store: VectorStore) -> None:
    docs = [_doc("a", "Owls hunt mice at night."), _doc("b", "Voles dig burrows in meadows.")]
    ingestor.ingest_documents(docs, "t1")
    before = _points(store, "t1")
    report = ingestor.ingest_documents([_doc("a", "Owls swallow their prey whole."), docs[1]], "t1")
    assert report.replaced == ["a"] and report.unchanged == ["b"]
    after = _points(store, "t1")
    b_ids = {k for k, v in before.items() if v["doc_id"] == "b"}
    assert b_ids == {k for k, v in after.items() if v["doc_id"] == "b"}
    a_texts = [v["text"] for v in after.values() if v["doc_id"] == "a"]
    assert a_texts == ["Owls swallow their prey whole."] and len(after) == 2


def test_delete_removes_points_manifest_row_and_sink_entry(settings: Settings, cached_embedder, store) -> None:  # type: ignore[no-untyped-def]
    sink = RecordingSink()
    ing = Ingestor(settings, cached_embedder, store, sinks=[sink])
    ing.ingest_documents([_doc("a", "Owls hunt mice."), _doc("b", "Voles dig burrows.")], "t1")
    assert set(sink.docs) == {("t1", "a"), ("t1", "b")}
    assert ing.delete_document("a", "t1") is True
    assert {v["doc_id"] for v in _points(store, "t1").values()} == {"b"}
    assert [d.doc_id for d in ing.list_documents("t1")] == ["b"] and set(sink.docs) == {("t1", "b")}
    assert ing.delete_document("a", "t1") is False
    ing.close()


class FinishingSink(RecordingSink):
    """A sink with tenant-wide work after each ingest (as the graph's synonym linking); it can fail."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.finished: list[tuple[str, int]] = []
        self.fail = fail

    def finish(self, tenant: str) -> None:
        self.finished.append((tenant, len(self.docs)))
        if self.fail:
            raise RuntimeError("synonyms could not be linked")


def test_sinks_finish_once_after_each_ingest_and_a_failure_loses_nothing(
    settings: Settings, cached_embedder, store
) -> None:  # type: ignore[no-untyped-def]
    ok, failing = FinishingSink(), FinishingSink(fail=True)
    ing = Ingestor(settings, cached_embedder, store, sinks=[failing, ok])
    report = ing.ingest_documents([_doc("a", "Owls hunt mice."), _doc("b", "Voles dig burrows.")], "t1")
    assert ok.finished == [("t1", 2)] and failing.finished == [("t1", 2)]  # after every document, and both ran
    assert sorted(report.added) == ["a", "b"] and not report.failed
    assert {d.doc_id for d in ing.list_documents("t1")} == {"a", "b"}
    ing.close()


def test_sink_failure_keeps_the_old_version(settings: Settings, cached_embedder, store) -> None:  # type: ignore[no-untyped-def]
    ing = Ingestor(settings, cached_embedder, store, sinks=[RecordingSink(refuse="a")])
    first = ing.ingest_documents([_doc("a", "Owls hunt mice."), _doc("b", "Voles dig.")], "t1")
    assert first.added == ["b"] and [f.source for f in first.failed] == ["mem:a"]
    assert "RecordingSink failed: cannot take a" in first.failed[0].error
    assert {v["doc_id"] for v in _points(store, "t1").values()} == {"b"}
    ing.sinks = [RecordingSink(refuse="b")]
    ing.ingest_documents([_doc("b", "Voles dig deep tunnels.")], "t1")
    assert [v["text"] for v in _points(store, "t1").values()] == ["Voles dig."]
    ing.close()


def test_tenants_are_isolated(ingestor: Ingestor, store: VectorStore) -> None:
    ingestor.ingest_documents([_doc("a", "Owls hunt mice.")], "alpha")
    ingestor.ingest_documents([_doc("a", "Completely different text.")], "beta")
    assert [v["text"] for v in _points(store, "alpha").values()] == ["Owls hunt mice."]
    assert [v["text"] for v in _points(store, "beta").values()] == ["Completely different text."]
    assert [d.doc_id for d in ingestor.list_documents("gamma")] == []


def test_bad_inputs_are_reported_per_file_and_the_rest_is_ingested(
    ingestor: Ingestor, store: VectorStore, tmp_path: Path
) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "good.md").write_text("# Owls\n\nOwls hunt at night.\n", encoding="utf-8")
    (src / "empty.txt").write_bytes(b"")
    (src / "latin1.txt").write_bytes("café".encode("latin-1"))
    (src / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    (src / "huge.txt").write_bytes(b"word " * 1000)
    (src / "corpus.jsonl").write_text('{"id": "c1", "title": "Vole", "text": "Voles dig."}\n{oops\n', encoding="utf-8")
    ingestor.cfg = ingestor.cfg.model_copy(update={"max_file_bytes": 2000})
    report = ingestor.ingest_paths([src], "t1")
    assert sorted(report.added) == sorted(
        ["c1", next(d.doc_id for d in ingestor.list_documents("t1") if d.title == "Owls")]
    )
    reasons = {Path(f.source.split(":")[0]).name: f.error for f in report.failed}
    assert set(reasons) == {"empty.txt", "latin1.txt", "blob.txt", "huge.txt", "corpus.jsonl"}
    assert "not valid UTF-8" in reasons["latin1.txt"] and "binary" in reasons["blob.txt"]
    assert "over the 2,000-byte limit" in reasons["huge.txt"] and "malformed JSON" in reasons["corpus.jsonl"]
    assert len(_points(store, "t1")) == 2


class SlowSink(FinishingSink):
    """A sink whose upserts and finish take a known time."""

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        time.sleep(0.05)
        super().upsert(tenant, doc, chunks)

    def finish(self, tenant: str) -> None:
        time.sleep(0.1)
        super().finish(tenant)


def test_the_report_says_where_the_time_went(settings: Settings, cached_embedder, store) -> None:  # type: ignore[no-untyped-def]
    ing = Ingestor(settings, cached_embedder, store, sinks=[SlowSink()])
    docs = [_doc("a", "Owls hunt mice."), _doc("b", "Voles dig burrows."), _doc("c", "Hares box in spring.")]
    report = ing.ingest_documents(docs, "t1")
    stages = report.stage_seconds
    assert {"load", "prepare", "embed", "sparse", "vector_store", "manifest"} <= set(stages)
    assert 0.15 <= stages["sink:SlowSink"] < 0.15 + 0.5  # three upserts of 50 ms, timed per sink
    assert 0.1 <= stages["finish:SlowSink"] < 0.1 + 0.5
    assert sum(stages.values()) <= report.seconds + 1e-3  # stages are parts of the call, never more than it
    again = ing.ingest_documents(docs, "t1")  # nothing to do: no embedding, no sink work
    assert "embed" not in again.stage_seconds and "sink:SlowSink" not in again.stage_seconds
    ing.close()


def test_fit_chunks_makes_prose_fit_the_embedder_and_re_ingests_when_toggled(
    settings: Settings, cached_embedder, store
) -> None:  # type: ignore[no-untyped-def]
    from knowledge.chunking import embedding_text

    prose = "\n\n".join(
        f"Section {i}: the configuration parameter log_rotation_age (an integer, in minutes) sets the maximum "
        f"lifetime of an individual log file; after this many minutes have elapsed, a new log file is created."
        for i in range(30)
    )
    doc = _doc("manual", prose, title="Error Reporting and Logging")

    def fit(on: bool) -> Settings:
        return settings.model_copy(update={"ingest": settings.ingest.model_copy(update={"fit_chunks": on})})

    assert settings.ingest.fit_chunks  # the default
    plain = Ingestor(fit(False), cached_embedder, store)
    first = plain.ingest_documents([doc], "t1")
    fitted = Ingestor(fit(True), cached_embedder, store)
    again = fitted.ingest_documents([doc], "t1")
    assert first.added == ["manual"] and again.replaced == ["manual"]  # the setting is in the version key
    model = cached_embedder.inner
    texts = [v["text"] for v in _points(store, "t1").values()]
    assert len(texts) == again.chunks > first.chunks
    heads = [embedding_text(c) for c in fitted._chunks(doc)]
    assert max(model.count_pieces(heads)) <= model.window  # every chunk, heading included, is read whole
    assert max(model.count_pieces([embedding_text(c) for c in plain._chunks(doc)])) > model.window
    plain.close()
    fitted.close()
