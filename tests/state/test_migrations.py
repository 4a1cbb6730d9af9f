"""Schema migrations: Postgres versions applied in order on start, an older schema upgraded with its rows kept."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import psycopg
import pytest

from api.pg_jobs import PgJobStore
from graphs.events import Done, Envelope, RunStarted
from graphs.tracing.pg_store import PgTraceStore
from graphs.tracing.store import SCHEMA_VERSION, TraceStore
from knowledge.owners import Owner
from knowledge.postgres import PostgresError, migrate, migrations, open_pool, schema_version


def test_migrations_are_numbered_without_gaps() -> None:
    found = migrations()
    assert [m.version for m in found] == list(range(1, len(found) + 1))
    assert len(found) >= 4 and all(m.sql.strip() for m in found)


def test_an_older_schema_is_upgraded_on_start_and_keeps_its_rows(fresh_pg_url: str) -> None:
    pool = open_pool(fresh_pg_url, migrate_schema=False)
    try:
        assert migrate(pool, target=3) == [1, 2, 3]  # the schema before owners existed
        with pool.connection() as conn:
            conn.execute(
                "INSERT INTO runs (id, tenant, question, status, started_at) VALUES (%s, %s, %s, %s, %s)",
                ("old-run", "a", "q", "running", 1.0),
            )
            conn.execute(
                "INSERT INTO jobs (id, tenant, status, created_at, files) VALUES (%s, %s, %s, %s, %s)",
                ("old-job", "a", "running", 1.0, '["x.md"]'),
            )
            cols = {
                r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name='runs'")
            }
        assert "owner" not in cols
    finally:
        pool.close()
    store = PgTraceStore.open(fresh_pg_url)  # a newer Waypoint starts: it migrates
    try:
        latest = migrations()[-1].version
        assert schema_version(store._pool) == latest
        run = store.get_run("old-run", tenant="a")
        assert run is not None and run.status == "running"
        store.append(Envelope(run_id="old-run", seq=0, ts=2.0, event=RunStarted(question="q")))
        me = Owner.this_process()
        assert store.interrupt_dead(me, lease_s=30.0) == ["old-run"]  # no owner recorded: its process is gone
        jobs = PgJobStore(store._pool, owner=me)
        assert jobs.interrupt_dead(me, lease_s=30.0) == ["old-job"]
        job = jobs.get("old-job", tenant="a")
        assert job is not None and job.status == "failed"
    finally:
        store.close()


def test_a_database_from_a_newer_version_is_refused(fresh_pg_url: str) -> None:
    open_pool(fresh_pg_url).close()
    with psycopg.connect(fresh_pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO waypoint_schema (version, name, applied_at) VALUES (999, 'future', 0)")
    with pytest.raises(PostgresError, match="newer than this Waypoint"):
        open_pool(fresh_pg_url)


def test_replicas_migrating_at_once_apply_each_version_once(fresh_pg_url: str) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            open_pool(fresh_pg_url).close()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(fresh_pg_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM waypoint_schema ORDER BY version")]
    assert versions == [m.version for m in migrations()]


def test_a_failing_migration_leaves_the_schema_as_it_was(fresh_pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge import postgres

    good = migrations()
    broken = [*good, postgres.Migration(len(good) + 1, "broken", "ALTER TABLE runs ADD COLUMN x INT; SELECT 1/0;")]
    monkeypatch.setattr(postgres, "migrations", lambda: broken)
    pool = open_pool(fresh_pg_url, migrate_schema=False)
    try:
        with pytest.raises(psycopg.errors.DivisionByZero):
            migrate(pool)
        assert schema_version(pool) == 0
        monkeypatch.setattr(postgres, "migrations", lambda: good)
        assert migrate(pool) == [m.version for m in good]
    finally:
        pool.close()


_V1_SCHEMA = """
CREATE TABLE runs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, thread_id TEXT, question TEXT NOT NULL,
    status TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL, answer TEXT,
    citations TEXT NOT NULL DEFAULT '[]', totals TEXT NOT NULL DEFAULT '{}', last_seq INTEGER NOT NULL DEFAULT -1);
CREATE TABLE events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts REAL NOT NULL, kind TEXT NOT NULL,
    json TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
"""


def test_a_version_1_sqlite_run_store_is_upgraded_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(_V1_SCHEMA)
    conn.execute(
        "INSERT INTO runs (id, tenant, question, status, started_at, last_seq) VALUES ('r', 'a', 'q', 'running', 1, 0)"
    )
    conn.execute(
        "INSERT INTO events VALUES ('r', 0, 1.0, 'run_started', ?)", (RunStarted(question="q").model_dump_json(),)
    )
    conn.commit()
    conn.close()
    store = TraceStore.open(path)
    me = Owner.this_process()
    assert store.interrupt_dead(me, lease_s=30.0) == ["r"]
    events = store.events("r", tenant="a")
    assert [e.event.kind for e in events] == ["run_started", "error", "done"]
    assert isinstance(events[-1].event, Done) and events[-1].event.status == "interrupted"
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    TraceStore.open(path).close()  # reopening an up-to-date file changes nothing
