"""Whose data an MCP call may use: the API's key → tenant mapping, over HTTP per request, over stdio once.

Over streamable HTTP every request carries its key (``Authorization: Bearer <key>`` or ``X-API-Key``) and
``KeyGuard`` turns away a request without a good one before the MCP layer sees it; each tool call then
looks up its own tenant from its request's headers. Over stdio there are no headers: the tenant is fixed at
start-up, from a key (``--api-key``, required when keys are configured) or a tenant name (without keys).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from api.tenants import TENANT_NAME, KeyRing


class AccessError(Exception):
    """A caller without a usable key or tenant."""


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """The key sent as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (header names in any case)."""
    lower = {k.lower(): v for k, v in headers.items()}
    auth = lower.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return lower.get("x-api-key")


class Access:
    """Resolves the tenant of a call: from its HTTP headers, or the one fixed for a stdio session."""

    def __init__(self, keyring: KeyRing, *, fixed_tenant: str | None = None) -> None:
        self.keyring = keyring
        self.fixed_tenant = fixed_tenant
        """The stdio session's tenant; None over HTTP."""

    @classmethod
    def for_stdio(cls, keyring: KeyRing, *, api_key: str | None, tenant: str | None) -> Access:
        """The stdio session's access: the key's tenant when keys are configured, else ``tenant`` (or default)."""
        if keyring.enabled:
            if tenant is not None:
                raise AccessError("API keys are configured: give --api-key (its tenant is used), not --tenant")
            found = keyring.tenant_for(api_key)
            if found is None:
                raise AccessError("API keys are configured: --api-key is missing or not a known key")
            return cls(keyring, fixed_tenant=found)
        if tenant is not None and not TENANT_NAME.match(tenant):
            raise AccessError(f"bad tenant name {tenant!r} (letters, digits, _ and -, at most 64)")
        return cls(keyring, fixed_tenant=tenant or keyring.default_tenant)

    def tenant(self, headers: Mapping[str, str] | None) -> str:
        """The caller's tenant; ``AccessError`` for a missing or unknown key."""
        if headers is None:
            if self.fixed_tenant is None:
                raise AccessError("no request headers to read an API key from")
            return self.fixed_tenant
        found = self.keyring.tenant_for(key_from_headers(headers))
        if found is None:
            raise AccessError("missing or invalid API key (send Authorization: Bearer <key>)")
        return found


class KeyGuard:
    """ASGI middleware: with keys configured, an HTTP request without a known key gets a 401 and goes no further."""

    def __init__(self, app: ASGIApp, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keyring.enabled:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.keyring.tenant_for(key_from_headers(headers)) is not None:
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": {"type": "unauthorized", "message": "missing or invalid API key", "code": None}}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="waypoint"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
