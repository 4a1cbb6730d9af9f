"""The manifest of ingested documents: SQLite in the data dir, one row per (tenant, document).

A row's ``content_hash`` is the committed version (its points are live in the vector store);
``pending_hash`` is set while a new version is being written (or the document deleted). A row with
a pending hash after a crash tells recovery exactly which points to remove: the pending version's
(while the committed one is intact) or the whole document's (once the committed one was dropped).

``document`` keeps the committed version's ``Document`` (JSON) and ``pending_document`` the one being
written: the sinks (graph, trees) hold one version of a document, so undoing a write that reached them
means feeding them the committed version again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DELETING = "<deleting>"
"""Pending hash of a document being deleted."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
  tenant TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  title TEXT NOT NULL,
  source TEXT NOT NULL,
  content_hash TEXT,
  point_ids TEXT NOT NULL DEFAULT '[]',
  pending_hash TEXT,
  pending_point_ids TEXT NOT NULL DEFAULT '[]',
  chunks INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
  document TEXT,
  pending_document TEXT,
  PRIMARY KEY (tenant, doc_id)
)
"""
_ADDED_COLUMNS = {"document": "TEXT", "pending_document": "TEXT"}
"""Columns newer than the first schema, added to older manifests on open."""


@dataclass(frozen=True)
class ManifestEntry:
    """One document's row."""

    tenant: str
    doc_id: str
    title: str
    source: str
    content_hash: str | None
    point_ids: list[str]
    pending_hash: str | None
    pending_point_ids: list[str]
    chunks: int
    updated_at: str
    document: str | None = None
    """The committed version's ``Document`` as JSON (None for rows written before it was kept)."""
    pending_document: str | None = None
    """The pending version's ``Document`` as JSON."""


@dataclass(frozen=True)
class PendingWrite:
    """A document version about to be written."""

    doc_id: str
    title: str
    source: str
    content_hash: str
    point_ids: list[str]
    document: str | None = None
    """The version's ``Document`` as JSON."""


class Manifest:
    """Reads and writes the documents table; every method is one transaction."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        have = {r[1] for r in self._db.execute("PRAGMA table_info(documents)")}
        for name, kind in _ADDED_COLUMNS.items():
            if name not in have:
                self._db.execute(f"ALTER TABLE documents ADD COLUMN {name} {kind}")
        self._db.commit()
        self._lock = threading.Lock()

    def get(self, tenant: str, doc_id: str) -> ManifestEntry | None:
        """One document's row."""
        rows = self._select("tenant = ? AND doc_id = ?", (tenant, doc_id))
        return rows[0] if rows else None

    def committed(self, tenant: str) -> list[ManifestEntry]:
        """Documents with a committed version, by doc id."""
        return self._select("tenant = ? AND content_hash IS NOT NULL ORDER BY doc_id", (tenant,))

    def pending(self, tenant: str) -> list[ManifestEntry]:
        """Documents left mid-write (or mid-delete) by a crash."""
        return self._select("tenant = ? AND pending_hash IS NOT NULL", (tenant,))

    def begin(self, tenant: str, writes: Sequence[PendingWrite]) -> None:
        """Record the versions about to be written, before any point is."""
        rows = [
            (tenant, w.doc_id, w.title, w.source, w.content_hash, json.dumps(w.point_ids), w.document) for w in writes
        ]
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO documents (tenant, doc_id, title, source, pending_hash, pending_point_ids, "
                "pending_document) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, doc_id) DO UPDATE SET "
                "title = excluded.title, source = excluded.source, pending_hash = excluded.pending_hash, "
                "pending_point_ids = excluded.pending_point_ids, pending_document = excluded.pending_document",
                rows,
            )

    def begin_delete(self, tenant: str, doc_id: str) -> None:
        """Mark a document as being deleted (its committed version is going away)."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE documents SET content_hash = NULL, point_ids = '[]', document = NULL, pending_hash = ? "
                "WHERE tenant = ? AND doc_id = ?",
                (DELETING, tenant, doc_id),
            )

    def drop_committed(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Forget the committed versions whose points are about to be deleted (every sink holds the pending
        one by now); ``point_ids`` and ``document`` stay until the commit, so recovery can finish the job."""
        with self._lock, self._db:
            self._db.executemany(
                "UPDATE documents SET content_hash = NULL WHERE tenant = ? AND doc_id = ?",
                [(tenant, d) for d in doc_ids],
            )

    def commit(self, tenant: str, doc_ids: Sequence[str], chunks: Sequence[int]) -> None:
        """Make the pending versions the committed ones."""
        with self._lock, self._db:
            self._db.executemany(
                "UPDATE documents SET content_hash = pending_hash, point_ids = pending_point_ids, "
                "document = pending_document, pending_hash = NULL, pending_point_ids = '[]', "
                "pending_document = NULL, chunks = ?, updated_at = CURRENT_TIMESTAMP "
                "WHERE tenant = ? AND doc_id = ?",
                [(n, tenant, d) for d, n in zip(doc_ids, chunks, strict=True)],
            )

    def abort(self, tenant: str, doc_id: str) -> None:
        """Forget a pending version; drop the row if nothing is committed."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE documents SET pending_hash = NULL, pending_point_ids = '[]', pending_document = NULL "
                "WHERE tenant = ? AND doc_id = ?",
                (tenant, doc_id),
            )
            self._db.execute(
                "DELETE FROM documents WHERE tenant = ? AND doc_id = ? AND content_hash IS NULL", (tenant, doc_id)
            )

    def remove(self, tenant: str, doc_id: str) -> None:
        """Delete a document's row."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM documents WHERE tenant = ? AND doc_id = ?", (tenant, doc_id))

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def _select(self, where: str, params: tuple[str, ...]) -> list[ManifestEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT tenant, doc_id, title, source, content_hash, point_ids, pending_hash, pending_point_ids, "
                f"chunks, updated_at, document, pending_document FROM documents WHERE {where}",
                params,
            ).fetchall()
        return [
            ManifestEntry(
                r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], json.loads(r[7]), r[8], r[9], r[10], r[11]
            )
            for r in rows
        ]
