"""The document registry's contract (``Manifest`` on SQLite, ``PgManifest`` on Postgres) and its selection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from knowledge.manifest import Manifest, ManifestEntry, PendingWrite
from knowledge.postgres import is_postgres_url
from knowledge.settings import Settings


class DocumentRegistry(Protocol):
    """One row per (tenant, document): its committed version and any pending one."""

    def get(self, tenant: str, doc_id: str) -> ManifestEntry | None:
        """One document's row."""
        ...

    def committed(self, tenant: str) -> list[ManifestEntry]:
        """Documents with a committed version, by doc id."""
        ...

    def pending(self, tenant: str) -> list[ManifestEntry]:
        """Documents left mid-write (or mid-delete) by a crash."""
        ...

    def begin(self, tenant: str, writes: Sequence[PendingWrite]) -> None:
        """Record the versions about to be written, before any point is."""
        ...

    def begin_delete(self, tenant: str, doc_id: str) -> None:
        """Mark a document as being deleted."""
        ...

    def drop_committed(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Forget the committed versions whose points are about to be deleted."""
        ...

    def commit(self, tenant: str, doc_ids: Sequence[str], chunks: Sequence[int]) -> None:
        """Make the pending versions the committed ones."""
        ...

    def abort(self, tenant: str, doc_id: str) -> None:
        """Forget a pending version; drop the row if nothing is committed."""
        ...

    def remove(self, tenant: str, doc_id: str) -> None:
        """Delete a document's row."""
        ...

    def close(self) -> None:
        """Release the connection(s)."""
        ...


def open_registry(settings: Settings) -> DocumentRegistry:
    """Postgres when ``postgres_url`` is set, else ``manifest.sqlite`` in the data dir."""
    if is_postgres_url(settings.postgres_url):
        from knowledge.pg_manifest import PgManifest

        assert settings.postgres_url is not None
        return PgManifest.open(settings.postgres_url)
    return Manifest(settings.path("manifest.sqlite"))
