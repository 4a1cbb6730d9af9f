"""Where a tenant's points live in Qdrant: a collection each, or one collection partitioned by a tenant payload key.

``collection`` (default): ``waypoint_<tenant>`` per tenant. Each tenant keeps its own BM25 IDF
statistics, dropping a tenant is one call, and no query needs a tenant filter. Qdrant advises against
it for many tenants: every collection carries its own segments, indexes and overhead.

``payload``: Qdrant's payload-based multitenancy (https://qdrant.tech/documentation/guides/multitenancy/).
One collection, ``waypoint_tenants``; every point carries the ``tenant`` payload key, indexed as a
keyword with ``is_tenant=True`` (Qdrant lays a tenant's points out together on disk) and HNSW built
per tenant (``payload_m=16``, ``m=0``: no global graph, which no query uses since every one is filtered
by tenant). Every read, count and delete adds the tenant condition as a filter value (never query
text). Point ids are namespaced by tenant (uuid5 of tenant and id), so two tenants writing the same id
cannot overwrite each other; the caller's id travels in the ``point_id`` payload key and is what
searches return. Trade-off: the sparse vector's IDF is computed over the whole collection, so one
tenant's corpus shifts another's BM25 weights a little; dense scores are unaffected.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal, Protocol

from knowledge.vector_store.base import check_tenant

LayoutName = Literal["collection", "payload"]
TENANT_KEY = "tenant"
"""Payload key holding the tenant in the ``payload`` layout."""
POINT_ID_KEY = "point_id"
"""Payload key holding the caller's point id in the ``payload`` layout."""
SHARED_COLLECTION = "waypoint_tenants"
_ID_NS = uuid.UUID("0b6f3c52-8d0e-4f6a-a7d9-3e1c5b2a9f47")


class Layout(Protocol):
    """Maps (tenant, point id) to a collection, a stored id, a payload and the tenant's filter conditions."""

    name: LayoutName
    shared: bool
    """True when tenants share one collection (drop = delete by filter, not delete the collection)."""

    def collection(self, tenant: str) -> str:
        """The collection holding the tenant's points."""
        ...

    def scope(self, tenant: str) -> dict[str, Any]:
        """Exact-match payload conditions every request of the tenant adds."""
        ...

    def stored_id(self, tenant: str, point_id: str) -> str:
        """The id a point of the tenant is stored under."""
        ...

    def stored_payload(self, tenant: str, point_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload as stored."""
        ...

    def caller_view(self, stored_id: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The caller's id and payload of a stored point."""
        ...


class CollectionPerTenant:
    """One collection per tenant."""

    name: LayoutName = "collection"
    shared = False

    def collection(self, tenant: str) -> str:
        """``waypoint_<tenant>``."""
        return f"waypoint_{check_tenant(tenant)}"

    def scope(self, tenant: str) -> dict[str, Any]:
        """None: the collection is the tenant."""
        check_tenant(tenant)
        return {}

    def stored_id(self, tenant: str, point_id: str) -> str:
        """The id unchanged."""
        return point_id

    def stored_payload(self, tenant: str, point_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload unchanged."""
        return payload

    def caller_view(self, stored_id: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Unchanged."""
        return stored_id, payload


class PayloadPartitioned:
    """One shared collection; the tenant is a payload key on every point and a condition on every request."""

    name: LayoutName = "payload"
    shared = True

    def __init__(self, collection_name: str = SHARED_COLLECTION) -> None:
        self.collection_name = collection_name

    def collection(self, tenant: str) -> str:
        """The shared collection (after checking the tenant name)."""
        check_tenant(tenant)
        return self.collection_name

    def scope(self, tenant: str) -> dict[str, Any]:
        """``{"tenant": tenant}``."""
        return {TENANT_KEY: check_tenant(tenant)}

    def stored_id(self, tenant: str, point_id: str) -> str:
        """uuid5 of tenant and id: tenants cannot collide on ids."""
        return str(uuid.uuid5(_ID_NS, f"{check_tenant(tenant)}/{point_id}"))

    def stored_payload(self, tenant: str, point_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload plus the tenant and the caller's id."""
        return {**payload, TENANT_KEY: check_tenant(tenant), POINT_ID_KEY: point_id}

    def caller_view(self, stored_id: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The caller's id, and the payload without the layout's keys."""
        out = dict(payload)
        out.pop(TENANT_KEY, None)
        return str(out.pop(POINT_ID_KEY, stored_id)), out


def make_layout(name: str) -> Layout:
    """The layout a setting names."""
    if name == "collection":
        return CollectionPerTenant()
    if name == "payload":
        return PayloadPartitioned()
    raise ValueError(f"unknown vector layout {name!r}; use 'collection' or 'payload'")
