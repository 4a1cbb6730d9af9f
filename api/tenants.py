"""API keys map to tenants. No keys configured: one default tenant, no key asked (local use)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path

from fastapi import Request

from api.errors import APIError

TENANT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
"""What a tenant name may look like (it names collections and graphs in the stores)."""


class KeyFileError(Exception):
    """The API key file is missing or malformed."""


class KeyRing:
    """Looks up the tenant of an API key (keys are kept only as SHA-256 digests)."""

    def __init__(self, keys: dict[str, str], *, default_tenant: str = "default") -> None:
        self._by_digest = {_digest(k): t for k, t in keys.items()}
        self.default_tenant = default_tenant

    @classmethod
    def from_file(cls, path: Path | None, *, default_tenant: str = "default") -> KeyRing:
        """Read ``{"<key>": "<tenant>", ...}`` from a JSON file; no path: no keys."""
        if path is None:
            return cls({}, default_tenant=default_tenant)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise KeyFileError(f"cannot read API key file {str(path)!r}: {exc}") from exc
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and k and isinstance(v, str) and v for k, v in data.items()
        ):
            raise KeyFileError(f"API key file {str(path)!r} must map non-empty key strings to tenant names")
        bad = sorted({t for t in data.values() if not TENANT_NAME.match(t)})
        if bad:
            raise KeyFileError(f"API key file {str(path)!r}: bad tenant names {bad!r} (letters, digits, _ and -)")
        return cls(data, default_tenant=default_tenant)

    @property
    def enabled(self) -> bool:
        """True when keys are configured (every endpoint but health then needs one)."""
        return bool(self._by_digest)

    def tenant_for(self, key: str | None) -> str | None:
        """The key's tenant; the default tenant when no keys are configured; None for a bad key."""
        if not self.enabled:
            return self.default_tenant
        if not key:
            return None
        wanted = _digest(key)
        for digest, tenant in self._by_digest.items():
            if hmac.compare_digest(digest, wanted):
                return tenant
        return None


def partition_secret(configured: str | None, key_file: Path) -> bytes:
    """The configured secret, else the one in ``key_file`` (made on first use, readable by the owner only)."""
    if configured:
        return configured.encode("utf-8")
    try:
        return bytes.fromhex(key_file.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        pass
    secret = secrets.token_bytes(32)
    key_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secret.hex() + "\n")
    return secret


def partition_tag(secret: bytes, tenant: str) -> str:
    """The tenant's prefix-cache partition tag: unguessable without the secret, stable for the tenant."""
    return hmac.new(secret, tenant.encode("utf-8"), hashlib.sha256).hexdigest()[:24]


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def request_key(request: Request) -> str | None:
    """The key sent as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``."""
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return request.headers.get("x-api-key")


def current_tenant(request: Request) -> str:
    """FastAPI dependency: the caller's tenant, or 401."""
    ring: KeyRing = request.app.state.keyring
    tenant = ring.tenant_for(request_key(request))
    if tenant is None:
        raise APIError(401, "unauthorized", "missing or invalid API key (send Authorization: Bearer <key>)")
    request.state.tenant = tenant
    return tenant
