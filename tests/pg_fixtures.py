"""Postgres for the tests: one throwaway database per test session, emptied before each test that uses it.

The server is ``WAYPOINT_TEST_POSTGRES_URL`` (an admin URL; default: the machine's PostgreSQL at
``postgresql://root@127.0.0.1:5432/postgres``, trust auth). A database ``wp_test_<random>`` is
created for the session and dropped at its end, so parallel sessions never share tables. Tests
that need Postgres skip, saying why, when the server cannot be reached.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

DEFAULT_ADMIN_URL = "postgresql://root@127.0.0.1:5432/postgres"
STATE_TABLES = ("events", "runs", "jobs", "documents", "owners")


def admin_url() -> str:
    """The server to create test databases on."""
    return os.environ.get("WAYPOINT_TEST_POSTGRES_URL", DEFAULT_ADMIN_URL)


def _with_db(url: str, name: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """URL of a fresh database for this session (dropped at the end); skips when Postgres is unreachable."""
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install '.[postgres]')")
    url = admin_url()
    try:
        admin = psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable at {url} (set WAYPOINT_TEST_POSTGRES_URL): {exc}")
    name = f"wp_test_{uuid.uuid4().hex[:16]}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')  # a generated identifier, not input
    try:
        yield _with_db(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """The session's database, migrated, with Waypoint's state tables emptied."""
    import psycopg

    from knowledge.postgres import open_pool

    open_pool(pg_database).close()  # migrate
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {', '.join(STATE_TABLES)} CASCADE")
    return pg_database


@pytest.fixture
def fresh_pg_url(pg_database: str) -> Iterator[str]:
    """A database of its own (empty, not migrated), dropped after the test: for migration tests."""
    import psycopg

    name = f"wp_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_db(admin_url(), name)
    finally:
        with psycopg.connect(admin_url(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
