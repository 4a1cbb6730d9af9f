"""Browser-facing guards (pure ASGI middleware): a Host allow-list and, without API keys, an Origin check.

Without keys a local Waypoint trusts whoever can reach it, which a web page in the user's browser can:
by DNS rebinding (a hostile name that resolves to 127.0.0.1: the request carries that name in
``Host``) or by a cross-site form post (it carries the page's ``Origin``). So in keyless mode requests whose
``Host`` is not a loopback name, the bind host or a configured name get 421 (with keys, only when names
are configured), and a state-changing request from a foreign ``Origin`` gets 403. Requests without
``Origin`` (curl, SDKs) are not browsers' cross-site requests and pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from api.errors import error_body

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Host names always accepted."""
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
"""Bind addresses that mean "every interface": they name no host."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing (the Origin check leaves them alone)."""


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or netloc, lower-cased, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(bind_host: str, extra: Iterable[str]) -> frozenset[str] | None:
    """The accepted host names; None when the list holds ``*`` (no check)."""
    names = {host_name(h) for h in extra}
    if "*" in names:
        return None
    if bind_host not in WILDCARD_BINDS:
        names.add(host_name(bind_host))
    return frozenset(names | LOOPBACK_NAMES)


class BrowserGuard:
    """Refuses unknown ``Host`` names (421) and, when ``check_origin``, cross-origin writes (403)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: frozenset[str] | None,
        check_origin: bool,
        origins: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.check_origin = check_origin
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            await _refuse(send, 421, "misdirected_request", "this server does not answer for that Host name")
            return
        origin = headers.get("origin")
        writes = scope.get("method", "GET") not in SAFE_METHODS
        if self.check_origin and origin is not None and writes and not self._same_or_allowed(origin, host):
            await _refuse(send, 403, "forbidden", "cross-origin requests may not change anything here")
            return
        await self.app(scope, receive, send)

    def _same_or_allowed(self, origin: str, host: str) -> bool:
        origin = origin.strip().rstrip("/").lower()
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc == host.strip().lower()


async def _refuse(send: Send, status: int, type_: str, message: str) -> None:
    body = json.dumps(error_body(type_, message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
