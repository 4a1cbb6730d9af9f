"""Postgres for Waypoint's durable state: a connection pool and versioned schema migrations.

The schema is a list of ordered SQL files in ``knowledge/migrations`` (``0001_runs.sql``, ...). A
``waypoint_schema`` table records the versions applied; ``migrate`` applies the missing ones in
order, in one transaction, under an advisory lock so replicas starting together apply each
version once (and a failed migration leaves the schema as it was). A database at a newer
version than this code knows is refused: an old replica must not write into a schema it does
not understand.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

MIGRATIONS_PACKAGE = "knowledge.migrations"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x5741_5950  # "WAYP": advisory lock held while migrating


class PostgresError(Exception):
    """Postgres is not usable: the driver is missing, the URL is wrong, or the schema is from a newer version."""


@dataclass(frozen=True)
class Migration:
    """One schema version."""

    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """Every migration shipped with this code, oldest first."""
    out = []
    for entry in resources.files(MIGRATIONS_PACKAGE).iterdir():
        match = _NAME.match(entry.name)
        if match:
            out.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    out.sort(key=lambda m: m.version)
    versions = [m.version for m in out]
    if versions != list(range(1, len(out) + 1)):
        raise PostgresError(f"migrations must be numbered 1..n without gaps, found {versions}")
    return out


def is_postgres_url(url: str | None) -> bool:
    """True for ``postgres://`` and ``postgresql://`` URLs."""
    return bool(url) and str(url).startswith(("postgres://", "postgresql://"))


def open_pool(url: str, *, max_size: int = 8, migrate_schema: bool = True) -> Any:
    """A psycopg connection pool on ``url`` (autocommit connections), the schema migrated to the latest version."""
    try:
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # the driver is a dependency, but say what to do if it went missing
        raise PostgresError("Postgres state needs psycopg and psycopg-pool: pip install '.[postgres]'") from exc
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True},
        check=_check_if_idle,
        reset=_mark_returned,
        open=False,
        name="waypoint-state",
    )
    try:
        pool.open(wait=True, timeout=10.0)
    except Exception as exc:
        pool.close()
        raise PostgresError(f"cannot connect to Postgres: {exc}") from exc
    if migrate_schema:
        try:
            migrate(pool)
        except Exception:
            pool.close()
            raise
    return pool


_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS waypoint_schema ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
)


_CHECK_IDLE_S = 5.0
"""A pooled connection idle longer than this is checked with a round trip before use (a server restart or a
dropped connection then costs a reconnect, not an error); a busy one is not (the check doubled an event append)."""


def _mark_returned(conn: Any) -> None:
    conn._waypoint_returned_at = time.monotonic()


def _check_if_idle(conn: Any) -> None:
    from psycopg_pool import ConnectionPool

    if conn.broken or time.monotonic() - getattr(conn, "_waypoint_returned_at", 0.0) > _CHECK_IDLE_S:
        ConnectionPool.check_connection(conn)


def schema_version(pool: Any) -> int:
    """The highest applied migration (0 for an empty database)."""
    with pool.connection() as conn:
        if conn.execute("SELECT to_regclass('waypoint_schema')").fetchone()[0] is None:
            return 0
        row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM waypoint_schema").fetchone()
    return int(row[0])


def migrate(pool: Any, *, target: int | None = None) -> list[int]:
    """Apply the missing migrations up to ``target`` (default: all); returns the versions applied now."""
    known = migrations()
    latest = known[-1].version if known else 0
    target = latest if target is None else target
    applied: list[int] = []
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))  # replicas: one at a time
        conn.execute(_VERSION_TABLE)
        row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM waypoint_schema").fetchone()
        current = int(row[0])
        if current > latest:
            raise PostgresError(
                f"the database schema is at version {current}, newer than this Waypoint's {latest}: upgrade it"
            )
        for m in known:
            if current < m.version <= target:
                conn.execute(m.sql)
                conn.execute(
                    "INSERT INTO waypoint_schema (version, name, applied_at) VALUES (%s, %s, %s)",
                    (m.version, m.name, time.time()),
                )
                applied.append(m.version)
    return applied
