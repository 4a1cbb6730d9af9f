"""The document registry on Postgres: the ``Manifest`` contract, shared by every API replica and worker."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from knowledge.manifest import DELETING, ManifestEntry, PendingWrite

_COLUMNS = (
    "tenant, doc_id, title, source, content_hash, point_ids, pending_hash, pending_point_ids, chunks, updated_at, "
    "document, pending_document"
)
_NOW = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"


class PgManifest:
    """Reads and writes the ``documents`` table; every method is one transaction."""

    def __init__(self, pool: Any, *, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool

    @classmethod
    def open(cls, url: str) -> PgManifest:
        """Connect to ``url`` and migrate the schema to the latest version."""
        from knowledge.postgres import open_pool

        return cls(open_pool(url, max_size=4), owns_pool=True)

    def get(self, tenant: str, doc_id: str) -> ManifestEntry | None:
        """One document's row."""
        rows = self._select("tenant = %s AND doc_id = %s", (tenant, doc_id))
        return rows[0] if rows else None

    def committed(self, tenant: str) -> list[ManifestEntry]:
        """Documents with a committed version, by doc id."""
        return self._select("tenant = %s AND content_hash IS NOT NULL ORDER BY doc_id", (tenant,))

    def pending(self, tenant: str) -> list[ManifestEntry]:
        """Documents left mid-write (or mid-delete) by a crash."""
        return self._select("tenant = %s AND pending_hash IS NOT NULL ORDER BY doc_id", (tenant,))

    def _many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(sql, rows)

    def begin(self, tenant: str, writes: Sequence[PendingWrite]) -> None:
        """Record the versions about to be written, before any point is."""
        rows = [
            (tenant, w.doc_id, w.title, w.source, w.content_hash, json.dumps(w.point_ids), w.document) for w in writes
        ]
        self._many(
            "INSERT INTO documents (tenant, doc_id, title, source, pending_hash, pending_point_ids, pending_document) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, doc_id) DO UPDATE SET "
            "title = excluded.title, source = excluded.source, pending_hash = excluded.pending_hash, "
            "pending_point_ids = excluded.pending_point_ids, pending_document = excluded.pending_document",
            rows,
        )

    def begin_delete(self, tenant: str, doc_id: str) -> None:
        """Mark a document as being deleted (its committed version is going away)."""
        self._many(
            "UPDATE documents SET content_hash = NULL, point_ids = '[]', document = NULL, pending_hash = %s "
            "WHERE tenant = %s AND doc_id = %s",
            [(DELETING, tenant, doc_id)],
        )

    def drop_committed(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Forget the committed versions whose points are about to be deleted (every sink holds the pending
        one by now); ``point_ids`` and ``document`` stay until the commit, so recovery can finish the job."""
        self._many(
            "UPDATE documents SET content_hash = NULL WHERE tenant = %s AND doc_id = %s",
            [(tenant, d) for d in doc_ids],
        )

    def commit(self, tenant: str, doc_ids: Sequence[str], chunks: Sequence[int]) -> None:
        """Make the pending versions the committed ones."""
        self._many(
            "UPDATE documents SET content_hash = pending_hash, point_ids = pending_point_ids, "
            "document = pending_document, pending_hash = NULL, pending_point_ids = '[]', pending_document = NULL, "
            f"chunks = %s, updated_at = {_NOW} "
            "WHERE tenant = %s AND doc_id = %s",
            [(n, tenant, d) for d, n in zip(doc_ids, chunks, strict=True)],
        )

    def abort(self, tenant: str, doc_id: str) -> None:
        """Forget a pending version; drop the row if nothing is committed."""
        with self._pool.connection() as conn, conn.transaction():
            conn.execute(
                "UPDATE documents SET pending_hash = NULL, pending_point_ids = '[]', pending_document = NULL "
                "WHERE tenant = %s AND doc_id = %s",
                (tenant, doc_id),
            )
            conn.execute(
                "DELETE FROM documents WHERE tenant = %s AND doc_id = %s AND content_hash IS NULL", (tenant, doc_id)
            )

    def remove(self, tenant: str, doc_id: str) -> None:
        """Delete a document's row."""
        self._many("DELETE FROM documents WHERE tenant = %s AND doc_id = %s", [(tenant, doc_id)])

    def close(self) -> None:
        """Close the pool when this registry opened it."""
        if self._owns_pool:
            self._pool.close()

    def _select(self, where: str, params: tuple[str, ...]) -> list[ManifestEntry]:
        with self._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM documents WHERE {where}", params).fetchall()
        return [
            ManifestEntry(
                r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], json.loads(r[7]), r[8], r[9], r[10], r[11]
            )
            for r in rows
        ]
