"""The ingestion pipeline: load, chunk, embed, index; incremental, idempotent and crash-safe.

Each document's *version* hashes its title and text together with everything the index depends
on (embedding model, chunking and BM25 settings). Re-ingesting a document whose version is
committed does no work; a changed one replaces exactly its own points. Documents are written in
batches, in this order, so a crash at any step leaves nothing half-visible:

1. the manifest records the pending version and its point ids;
2. the new points are written hidden (``live = false``), and the sinks are fed;
3. the manifest forgets the replaced versions, whose points are then deleted;
4. the new points are made live in one call, and the manifest commits.

``recover(tenant)`` (run before every ingest or delete) finishes or undoes whatever a crash left
pending, so a re-run ends in the same state as a clean run. Sinks (the knowledge graph, the document
trees) get the same document and chunks: ``upsert`` replaces a document in the sink, ``delete``
removes it; both must be idempotent.

A write is atomic across the vector store, every sink and the manifest. The manifest row is the
journal: it holds the pending version's point ids and ``Document`` and the committed version's
``Document``. Until step 3 a write is undone (a sink refused it, or recovery after a crash): every
sink gets the committed version again (or forgets a new document), the new points go, the row is
aborted. From step 3 on the old version is going: recovery finishes the write (deletes the old
points still there, makes the new ones live, commits); a new document not yet live is removed.

Uploaded files are named by their client: ``ingest_paths(..., names=[...])`` makes each document's
id from the tenant and that name (``upload_doc_id``) and its ``source`` the name itself, so the
same name uploaded again replaces (or leaves unchanged) the same document and no server path shows.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from pydantic import BaseModel, Field

from knowledge.chunking import CHUNKER, embedding_text, fitted_chunks
from knowledge.embeddings import Embedder
from knowledge.embeddings.base import piece_counter
from knowledge.loaders import CORPUS_SUFFIX, LoadError, discover, iter_corpus, load_file
from knowledge.manifest import DELETING, ManifestEntry, PendingWrite
from knowledge.models import Chunk, Document, stable_id
from knowledge.registry import DocumentRegistry, open_registry
from knowledge.settings import Settings
from knowledge.sparse import BM25Encoder
from knowledge.vector_store import VectorPoint, VectorStore, VectorStoreError

log = logging.getLogger(__name__)

Progress = Callable[[int], None]
"""Called with the number of inputs (files, passages) just handled."""
_POINT_NS = uuid.UUID("5f0b7c1e-2a4d-4c1b-9b7e-6a1d2f3c4b5a")


class IngestSink(Protocol):
    """Another index fed the same chunks (knowledge graph, document trees)."""

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Replace the document in the sink."""
        ...

    def delete(self, tenant: str, doc_id: str) -> None:
        """Remove the document from the sink (no error if absent)."""
        ...


def upload_doc_id(tenant: str, name: str) -> str:
    """The id of a document uploaded under a client-visible name: one id per (tenant, name)."""
    return stable_id(tenant, name, prefix="d_")


class IngestFailure(BaseModel):
    """One input that could not be ingested."""

    source: str
    """File path, ``path:line`` of a corpus line, or the document id."""
    error: str
    """Why, for the user."""


class IngestReport(BaseModel):
    """What an ingest call did, by document id."""

    added: list[str] = Field(default_factory=list)
    """Documents new to the tenant."""
    unchanged: list[str] = Field(default_factory=list)
    """Documents already indexed at the same version (no work done)."""
    replaced: list[str] = Field(default_factory=list)
    """Documents whose changed version replaced the old one."""
    failed: list[IngestFailure] = Field(default_factory=list)
    """Inputs that failed, with the reason; nothing of them is visible."""
    chunks: int = 0
    """Chunks written."""
    seconds: float = 0.0
    """Wall-clock time of the call."""
    stage_seconds: dict[str, float] = Field(default_factory=dict)
    """Where that time went: ``load`` (reading and parsing inputs), ``prepare`` (manifest lookups, chunking),
    ``embed``, ``sparse`` (BM25 vectors), ``vector_store`` (writes, deletes, making points live), ``manifest``,
    ``sink:<Name>`` (each sink's upserts: ``sink:GraphSink`` is entity extraction and the graph's writes) and
    ``finish:<Name>`` (a sink's once-per-ingest work). The rest of ``seconds`` is recovery and overhead."""

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the block's wall time to ``stage_seconds[stage]``."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + time.perf_counter() - started


class DocumentInfo(BaseModel):
    """A committed document of a tenant."""

    doc_id: str
    title: str
    source: str
    chunks: int
    updated_at: str


@dataclass
class _Prepared:
    doc: Document
    version: str
    chunks: list[Chunk]
    point_ids: list[str]
    old_point_ids: list[str] | None


class Ingestor:
    """Feeds documents into the vector store (and the sinks), keeping the manifest in step."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder,
        store: VectorStore,
        *,
        manifest: DocumentRegistry | None = None,
        sinks: Sequence[IngestSink] = (),
    ) -> None:
        self.cfg = settings.ingest
        self.embedder = embedder
        self.store = store
        self.manifest = manifest if manifest is not None else open_registry(settings)
        self.sinks = list(sinks)
        self.encoder = BM25Encoder(
            self.cfg.bm25_k1, self.cfg.bm25_b, self.cfg.bm25_avg_len, title_weight=self.cfg.bm25_title_weight
        )
        self._fit = piece_counter(embedder) if self.cfg.fit_chunks else None
        fit = (f"fit{self._fit.window}",) if self._fit is not None else ()  # in the key only when on: old keys hold
        self._settings_key = "|".join(
            map(str, (embedder.model_id, self.cfg.chunk_tokens, self.cfg.chunk_overlap, *self._bm25(), CHUNKER, *fit))
        )

    def ingest_paths(
        self,
        paths: Iterable[Path],
        tenant: str,
        *,
        progress: Progress | None = None,
        names: Sequence[str] | None = None,
    ) -> IngestReport:
        """Ingest files and directories (``.jsonl`` files as passage corpora).

        ``names`` (one per path, files only) are the client-visible names of uploaded files: they
        make the document ids (``upload_doc_id``) and are the sources reported and stored.
        """
        if names is None:
            return self._run(self._load_paths(paths), tenant, progress)
        files = list(paths)
        if len(files) != len(names):
            raise ValueError(f"{len(files)} paths but {len(names)} names")
        return self._run(self._load_named(files, names, tenant), tenant, progress)

    def ingest_corpus(
        self, path: Path, tenant: str, *, progress: Progress | None = None, name: str | None = None
    ) -> IngestReport:
        """Ingest a JSONL corpus: each ``{id, title, text}`` line is one document with that id.

        ``name`` is the corpus's client-visible name (sources ``corpus:<name>``, errors ``<name>:<line>``).
        """
        return self._run(iter_corpus(path, self.cfg.max_doc_chars, name=name), tenant, progress)

    def ingest_documents(
        self, docs: Iterable[Document], tenant: str, *, progress: Progress | None = None
    ) -> IngestReport:
        """Ingest already-loaded documents."""
        return self._run(docs, tenant, progress)

    def delete_document(self, doc_id: str, tenant: str) -> bool:
        """Remove a document from the store, the sinks and the manifest; False if it was not there.

        A document the manifest does not know is still removed from the store and every sink (an
        orphan left by an older version); the answer is True when the store held points of it.
        """
        self.recover(tenant)
        if self.manifest.get(tenant, doc_id) is None:
            orphan = self.store.count(tenant, doc_id=doc_id) > 0
            self._purge(tenant, doc_id)
            return orphan
        self.manifest.begin_delete(tenant, doc_id)
        self._purge(tenant, doc_id)
        return True

    def list_documents(self, tenant: str) -> list[DocumentInfo]:
        """The tenant's committed documents, by id."""
        return [
            DocumentInfo(doc_id=e.doc_id, title=e.title, source=e.source, chunks=e.chunks, updated_at=e.updated_at)
            for e in self.manifest.committed(tenant)
        ]

    def recover(self, tenant: str, *, roll_forward: bool = True) -> int:
        """Finish or undo writes a crash left pending; returns how many documents needed it.

        A replace that got past dropping its old version is finished (``roll_forward``) rather than
        removed: every sink holds the new version and all its points are written.
        """
        pending = self.manifest.pending(tenant)
        for e in pending:
            try:
                self._recover_one(tenant, e, roll_forward=roll_forward)
            except Exception as exc:  # a store or sink still failing: the row stays pending for the next try
                log.warning("recovering %r of tenant %r failed, retried later: %s", e.doc_id, tenant, exc)
        return len(pending)

    def _recover_one(self, tenant: str, e: ManifestEntry, *, roll_forward: bool) -> None:
        if e.pending_hash == DELETING:  # half-deleted: finish the delete
            self._purge(tenant, e.doc_id)
        elif e.content_hash is not None:
            self._undo(tenant, e)  # the committed version is intact in the store: back to it everywhere
        elif roll_forward and e.document is not None and e.pending_document is not None and e.pending_point_ids:
            self.store.delete_ids(tenant, e.point_ids)  # half-replaced: finish it (the old version's rest goes)
            self.store.set_live(tenant, e.pending_point_ids)
            self.manifest.commit(tenant, [e.doc_id], [len(e.pending_point_ids)])
        elif self._all_live(tenant, e.doc_id, e.pending_point_ids):
            self.manifest.commit(tenant, [e.doc_id], [len(e.pending_point_ids)])  # only the commit was missing
        else:  # new, or half-replaced (its old version was being dropped): remove it everywhere
            self._purge(tenant, e.doc_id)

    def close(self) -> None:
        """Close the manifest (the store is shared and closed by its owner)."""
        self.manifest.close()

    # -- internals ---------------------------------------------------------------------------

    def _run(self, items: Iterable[Document | LoadError], tenant: str, progress: Progress | None) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        self.store.ensure_tenant(tenant, self.embedder.dim)
        self.recover(tenant)
        for batch in self._batches(_timed_items(items, report), report, progress):
            self._ingest_batch(batch, tenant, report)
            if progress:
                progress(len(batch))
        self._finish_sinks(tenant, report)
        report.seconds = time.perf_counter() - started
        report.stage_seconds = {k: round(v, 3) for k, v in report.stage_seconds.items()}
        return report

    def _batches(
        self, items: Iterable[Document | LoadError], report: IngestReport, progress: Progress | None
    ) -> Iterator[list[Document]]:
        """Documents in batches of distinct ids; load errors go straight to the report."""
        batch: list[Document] = []
        for item in items:
            if isinstance(item, LoadError):
                report.failed.append(IngestFailure(source=item.source, error=item.reason))
                if progress:
                    progress(1)
                continue
            if len(batch) >= self.cfg.batch_docs or any(d.id == item.id for d in batch):
                yield batch
                batch = []
            batch.append(item)
        if batch:
            yield batch

    def _ingest_batch(self, docs: list[Document], tenant: str, report: IngestReport) -> None:
        with report.timed("prepare"):
            todo = [p for p in (self._prepare(d, tenant, report) for d in docs) if p is not None]
        if not todo:
            return
        try:
            with report.timed("embed"):
                vectors = self.embedder.embed([embedding_text(c) for p in todo for c in p.chunks])
        except Exception as exc:
            report.failed.extend(IngestFailure(source=p.doc.source, error=f"embedding failed: {exc}") for p in todo)
            return
        with report.timed("manifest"):
            self.manifest.begin(
                tenant,
                [
                    PendingWrite(p.doc.id, p.doc.title, p.doc.source, p.version, p.point_ids, p.doc.model_dump_json())
                    for p in todo
                ],
            )
        try:
            with report.timed("sparse"):
                points = self._points(todo, vectors)
            with report.timed("vector_store"):
                self.store.upsert(tenant, points)
            todo = self._feed_sinks(todo, tenant, report)
            if not todo:
                return
            replaced = [p for p in todo if p.old_point_ids is not None]
            with report.timed("manifest"):
                self.manifest.drop_committed(tenant, [p.doc.id for p in replaced])
            with report.timed("vector_store"):
                self.store.delete_ids(tenant, [i for p in replaced for i in p.old_point_ids or []])
                self.store.set_live(tenant, [i for p in todo for i in p.point_ids])
        except VectorStoreError as exc:  # the store refuses now: put everything of this batch back, if it can
            self.recover(tenant, roll_forward=False)
            report.failed.extend(IngestFailure(source=p.doc.source, error=str(exc)) for p in todo)
            return
        with report.timed("manifest"):
            self.manifest.commit(tenant, [p.doc.id for p in todo], [len(p.chunks) for p in todo])
        for p in todo:
            (report.replaced if p.old_point_ids is not None else report.added).append(p.doc.id)
            report.chunks += len(p.chunks)

    def _prepare(self, doc: Document, tenant: str, report: IngestReport) -> _Prepared | None:
        """Chunk a document that needs work; None when it is unchanged or unusable."""
        version = stable_id(doc.content_hash, self._settings_key, length=32)
        entry = self.manifest.get(tenant, doc.id)
        if entry is not None and entry.content_hash == version:
            report.unchanged.append(doc.id)
            return None
        if len(doc.text) > self.cfg.max_doc_chars:
            error = f"document has {len(doc.text):,} chars, over the {self.cfg.max_doc_chars:,} limit"
            report.failed.append(IngestFailure(source=doc.source, error=error))
            return None
        chunks = self._chunks(doc)
        if not chunks:
            report.failed.append(IngestFailure(source=doc.source, error=f"document {doc.id!r} has no text"))
            return None
        ids = [str(uuid.uuid5(_POINT_NS, f"{tenant}/{doc.id}/{version}/{c.id}")) for c in chunks]
        old = entry.point_ids if entry is not None and entry.content_hash is not None else None
        return _Prepared(doc, version, chunks, ids, old)

    def _points(self, todo: list[_Prepared], vectors: list[list[float]]) -> list[VectorPoint]:
        points: list[VectorPoint] = []
        flat = iter(vectors)
        for p in todo:
            for chunk, pid in zip(p.chunks, p.point_ids, strict=True):
                payload = {**chunk.model_dump(), "chunk_id": chunk.id, "version": p.version, "live": False}
                sparse = self.encoder.encode_document(embedding_text(chunk), title=chunk.title)
                points.append(VectorPoint(id=pid, dense=next(flat), sparse=sparse, payload=payload))
        return points

    def _finish_sinks(self, tenant: str, report: IngestReport) -> None:
        """Tenant-wide work a sink does once per ingest (the graph's synonym edges). It derives from what is
        committed, so a failure is logged and the documents stay: the sink keeps its work for its next ingest."""
        for sink in self.sinks:
            finish = getattr(sink, "finish", None)
            if finish is None:
                continue
            try:
                with report.timed(f"finish:{_stage_name(sink)}"):
                    finish(tenant)
            except Exception as exc:  # derived data only; the documents are committed
                log.warning("%s.finish failed for tenant %r: %s", type(sink).__name__, tenant, exc)

    def _feed_sinks(self, todo: list[_Prepared], tenant: str, report: IngestReport) -> list[_Prepared]:
        """Give each document to every sink; a document a sink refuses is undone in every store and reported."""
        kept: list[_Prepared] = []
        for p in todo:
            try:
                for sink in self.sinks:
                    with report.timed(f"sink:{_stage_name(sink)}"):
                        sink.upsert(tenant, p.doc, p.chunks)
            except Exception as exc:
                error = f"{type(sink).__name__} failed: {exc}"
                entry = self.manifest.get(tenant, p.doc.id)
                try:
                    if entry is not None:
                        self._undo(tenant, entry)
                except Exception as undo_exc:  # left pending: recovery tries again before the next write
                    log.warning("undoing %r of tenant %r failed (recovery retries): %s", p.doc.id, tenant, undo_exc)
                    error += "; the previous version is restored on the next ingest"
                report.failed.append(IngestFailure(source=p.doc.source, error=error))
                continue
            kept.append(p)
        return kept

    def _undo(self, tenant: str, entry: ManifestEntry) -> None:
        """Back to the committed version everywhere: sinks restored (or cleared), new points deleted, row aborted."""
        self.store.delete_ids(tenant, entry.pending_point_ids)
        old = Document.model_validate_json(entry.document) if entry.document else None
        if entry.content_hash is not None and old is None:
            log.warning("no stored copy of %r (tenant %r): its sinks are left as they are", entry.doc_id, tenant)
        elif old is not None and entry.content_hash is not None:
            chunks = self._chunks(old)
            for sink in self.sinks:
                sink.upsert(tenant, old, chunks)
        else:
            for sink in self.sinks:
                sink.delete(tenant, entry.doc_id)
        self.manifest.abort(tenant, entry.doc_id)

    def _purge(self, tenant: str, doc_id: str) -> None:
        """Delete every trace of a document, then its manifest row."""
        self.store.delete_doc(tenant, doc_id)
        for sink in self.sinks:
            sink.delete(tenant, doc_id)
        self.manifest.remove(tenant, doc_id)

    def _chunks(self, doc: Document) -> list[Chunk]:
        cfg = self.cfg
        return fitted_chunks(doc, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap, counter=self._fit)

    def _all_live(self, tenant: str, doc_id: str, ids: Sequence[str]) -> bool:
        return bool(ids) and self.store.count(tenant, live=True, doc_id=doc_id) == len(ids) == self.store.count(
            tenant, doc_id=doc_id
        )

    def _load_named(self, paths: Sequence[Path], names: Sequence[str], tenant: str) -> Iterator[Document | LoadError]:
        """Uploaded files under their client names: ids from (tenant, name), the name as source and in errors."""
        for path, name in zip(paths, names, strict=True):
            if path.suffix.lower() == CORPUS_SUFFIX:
                yield from iter_corpus(path, self.cfg.max_doc_chars, name=name)
                continue
            doc = self._load_one(path)
            if isinstance(doc, LoadError):
                yield LoadError(name, doc.reason)
                continue
            title = PurePosixPath(name).stem if doc.title == path.stem else doc.title
            yield doc.model_copy(update={"id": upload_doc_id(tenant, name), "source": name, "title": title})

    def _load_paths(self, paths: Iterable[Path]) -> Iterator[Document | LoadError]:
        for path in discover(paths):
            if path.suffix.lower() == CORPUS_SUFFIX:
                yield from iter_corpus(path, self.cfg.max_doc_chars)
                continue
            yield self._load_one(path)

    def _load_one(self, path: Path) -> Document | LoadError:
        """One file's document, or why not: a loader's unexpected exception is this file's error, not the job's."""
        try:
            return load_file(path, max_bytes=self.cfg.max_file_bytes, max_doc_chars=self.cfg.max_doc_chars)
        except LoadError as exc:
            return exc
        except Exception as exc:  # a parser bug on hostile input (pypdf, markdown-it): this file only
            log.warning("loading %s failed", path, exc_info=True)
            return LoadError(str(path), f"could not be read ({type(exc).__name__})")

    def _bm25(self) -> tuple[float, ...]:
        base = (self.cfg.bm25_k1, self.cfg.bm25_b, self.cfg.bm25_avg_len)
        # the title weight joins the key only when set, so indexes built before it existed stay current
        return base if self.cfg.bm25_title_weight == 1.0 else (*base, self.cfg.bm25_title_weight)


def _timed_items(items: Iterable[Document | LoadError], report: IngestReport) -> Iterator[Document | LoadError]:
    """``items`` with the time spent producing each (loading and parsing) added to ``stage_seconds["load"]``."""
    it = iter(items)
    while True:
        with report.timed("load"):
            item = next(it, None)
        if item is None:
            return
        yield item


def _stage_name(sink: object) -> str:
    """A sink's name in ``stage_seconds``: its class name without the ``Blocking`` of a sync wrapper."""
    return type(sink).__name__.removeprefix("Blocking")
