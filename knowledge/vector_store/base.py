"""The ``VectorStore`` protocol: what ingestion and the vector-search tool need from a vector database."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from knowledge.errors import BadInputError
from knowledge.sparse import SparseVector

SearchMode = Literal["hybrid", "dense", "sparse"]
"""``hybrid``: dense and sparse fused by reciprocal rank; ``dense``: embeddings only; ``sparse``: BM25 only."""
FILTER_KEYS = frozenset({"doc_id", "source", "title", "chunk_id"})
"""Payload fields a search may filter on (exact match)."""
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")


class VectorStoreError(Exception):
    """The vector store refused a request or is unreachable."""


class BadFilterError(VectorStoreError, BadInputError):
    """A search filter names a field that cannot be filtered on."""


class BadTenantError(VectorStoreError, BadInputError):
    """A tenant name that cannot name a collection."""


@dataclass(frozen=True)
class VectorPoint:
    """One chunk as stored: a UUID point id, both vectors and the payload (chunk fields, ``doc_id``, ``live``)."""

    id: str
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]


@dataclass(frozen=True)
class Hit:
    """A search result: the point id, the store's score and the payload."""

    id: str
    score: float
    payload: dict[str, Any] = field(default_factory=dict)


class VectorStore(Protocol):
    """Per-tenant collections of chunk points with a dense and a sparse vector; only ``live`` points are searched."""

    def ensure_tenant(self, tenant: str, dim: int) -> None:
        """Create the tenant's collection if missing; refuse one built for another dimension."""
        ...

    def upsert(self, tenant: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points."""
        ...

    def set_live(self, tenant: str, ids: Sequence[str]) -> None:
        """Make points visible to search."""
        ...

    def delete_ids(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete points by id (missing ids are ignored)."""
        ...

    def delete_doc(self, tenant: str, doc_id: str) -> None:
        """Delete every point of a document, live or not."""
        ...

    def search(
        self,
        tenant: str,
        *,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        mode: SearchMode = "hybrid",
        k: int = 5,
        filters: Mapping[str, str] | None = None,
    ) -> list[Hit]:
        """The ``k`` best live points, best first."""
        ...

    def count(self, tenant: str, *, live: bool | None = None, doc_id: str | None = None) -> int:
        """Points of a tenant (optionally only live / not-live ones, or one document's)."""
        ...

    def drop_tenant(self, tenant: str) -> None:
        """Delete the tenant's collection."""
        ...

    def points(self, tenant: str) -> dict[str, dict[str, Any]]:
        """Every stored point of a tenant, live or not: caller id -> payload (reads them all; for inspection)."""
        ...

    def close(self) -> None:
        """Release the client (and an embedded engine's lock on the data dir)."""
        ...


def check_tenant(tenant: str) -> str:
    """The tenant name, if it is usable in a collection name."""
    if not _TENANT.match(tenant):
        raise BadTenantError(f"tenant {tenant!r} must be 1-63 letters, digits, '_' or '-', starting alphanumeric")
    return tenant


def check_filters(filters: Mapping[str, str] | None) -> dict[str, str]:
    """The filters as a plain dict, after checking every key is filterable."""
    out = dict(filters or {})
    bad = sorted(set(out) - FILTER_KEYS)
    if bad:
        raise BadFilterError(f"cannot filter on {bad!r}; allowed: {sorted(FILTER_KEYS)!r}")
    for key, value in out.items():
        if not isinstance(value, str):
            raise BadFilterError(f"filter {key!r} must be a string, got {type(value).__name__}")
    return out
