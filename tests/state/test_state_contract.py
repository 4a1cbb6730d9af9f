"""Every durable store against both backends: SQLite files in the data dir, and Postgres.

The same assertions run on each (parametrised fixtures), so the Postgres implementations keep the
SQLite defaults' contract: runs (listing, usage, retention, owners, cancel requests), ingest jobs,
the document registry.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.job_store import JobRecords
from api.jobs import JobStore
from api.pg_jobs import PgJobStore
from graphs.events import Done, Envelope, LLMUsage, RunError, RunStarted
from graphs.tracing.pg_store import PgTraceStore
from graphs.tracing.run_store import RunStore
from graphs.tracing.store import TraceStore
from knowledge.manifest import DELETING, Manifest, PendingWrite
from knowledge.owners import Owner
from knowledge.pg_manifest import PgManifest
from knowledge.registry import DocumentRegistry

BACKENDS = ["sqlite", "postgres"]


def _env(run_id: str, seq: int, event: object, ts: float | None = None) -> Envelope:
    return Envelope.model_validate({"run_id": run_id, "seq": seq, "ts": ts or 100.0 + seq, "event": event})


@pytest.fixture(params=BACKENDS)
def runs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    store: RunStore
    if request.param == "sqlite":
        store = TraceStore.open(tmp_path / "runs.sqlite")
    else:
        store = PgTraceStore.open(request.getfixturevalue("pg_url"))
    yield store
    store.close()


@pytest.fixture(params=BACKENDS)
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DocumentRegistry]:
    reg: DocumentRegistry
    if request.param == "sqlite":
        reg = Manifest(tmp_path / "manifest.sqlite")
    else:
        reg = PgManifest.open(request.getfixturevalue("pg_url"))
    yield reg
    reg.close()


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# ---- runs ----


def test_list_usage_and_purge_agree_on_both_backends(runs: RunStore) -> None:
    for i, status in enumerate(["ok", "error", "ok"]):
        run_id = f"r{i}"
        runs.start_run(run_id=run_id, tenant="a", question=f"q{i}", thread_id="t", started_at=10.0 + i)
        runs.append(_env(run_id, 0, RunStarted(question="q"), ts=10.0 + i))
        runs.append(_env(run_id, 1, LLMUsage(role="answerer", prompt_tokens=10, cached_tokens=4, completion_tokens=2)))
        runs.append(_env(run_id, 2, LLMUsage(role="grader", prompt_tokens=5, cached_tokens=0, completion_tokens=1)))
        runs.append(_env(run_id, 3, Done(status=status), ts=20.0 + i))  # type: ignore[arg-type]
    runs.start_run(run_id="other", tenant="b", question="q", started_at=11.0)
    assert [r.id for r in runs.list_runs(tenant="a")] == ["r2", "r1", "r0"]
    assert [r.id for r in runs.list_runs(tenant="a", status="ok")] == ["r2", "r0"]
    assert [r.id for r in runs.list_runs(tenant="a", before=(12.0, "r2"), limit=1)] == ["r1"]
    assert [r.id for r in runs.list_runs(tenant="a", since=11.0, until=12.0)] == ["r1"]
    usage = runs.usage_by_run(["r0", "r1", "other"], tenant="a")
    assert usage == {
        "r0": {"llm_calls": 2, "prompt_tokens": 15, "cached_tokens": 4, "completion_tokens": 3},
        "r1": {"llm_calls": 2, "prompt_tokens": 15, "cached_tokens": 4, "completion_tokens": 3},
    }
    assert runs.purge(older_than=21.5) == 3  # r0, r1 ended before; 'other' last did anything at 11; r2 ended at 22
    assert [r.id for r in runs.list_runs(tenant="a")] == ["r2"]
    assert runs.get_run("other", tenant="b") is None
    assert runs.events("r0", tenant="a") == []


def test_dead_owners_runs_are_interrupted_and_live_ones_untouched(runs: RunStore) -> None:
    me = Owner.this_process()
    live = Owner(id="elsewhere:1:live", host="elsewhere", pid=1, started_at=1.0)
    stale = Owner(id="elsewhere:2:stale", host="elsewhere", pid=2, started_at=1.0)
    gone = _dead_pid()
    crashed = Owner(id=f"{me.host}:{gone}:x", host=me.host, pid=gone, started_at=1.0)
    for owner in (me, live, stale, crashed):
        runs.heartbeat(owner)
    for run_id, owner_id in [("mine", me.id), ("live", live.id), ("stale", stale.id), ("crashed", crashed.id)]:
        runs.start_run(run_id=run_id, tenant="a", question="q", owner=owner_id)
        runs.append(_env(run_id, 0, RunStarted(question="q")))
    runs.start_run(run_id="ownerless", tenant="a", question="q")  # written before owners existed
    time.sleep(1.5)  # margins wide enough for a starved CI machine: "live" beats ~now, "stale" 1.5 s ago
    runs.heartbeat(live)
    runs.heartbeat(me)
    closed = runs.interrupt_dead(me, lease_s=1.2)
    assert sorted(closed) == ["crashed", "ownerless", "stale"]
    for run_id in ("mine", "live"):
        run = runs.get_run(run_id, tenant="a")
        assert run is not None and run.status == "running"
    run = runs.get_run("crashed", tenant="a")
    assert run is not None and run.status == "interrupted" and run.ended_at is not None and run.last_seq == 2
    events = runs.events("crashed", tenant="a")
    assert [e.seq for e in events] == [0, 1, 2]
    assert isinstance(events[1].event, RunError) and events[1].event.error_type == "Interrupted"
    assert isinstance(events[2].event, Done) and events[2].event.status == "interrupted"
    assert runs.interrupt_dead(me, lease_s=1.2) == []  # closed out once


def test_a_fresh_heartbeat_protects_a_remote_owner_until_its_lease_expires(runs: RunStore) -> None:
    me = Owner.this_process()
    remote = Owner(id="far:7:r", host="far", pid=7, started_at=1.0)
    runs.heartbeat(remote)
    runs.start_run(run_id="r", tenant="a", question="q", owner=remote.id)
    assert runs.interrupt_dead(me, lease_s=30.0) == []
    assert runs.interrupt_dead(me, lease_s=0.0) == ["r"]


def test_cancel_requests_reach_the_owner_only_for_running_runs(runs: RunStore) -> None:
    me = Owner.this_process()
    runs.start_run(run_id="r", tenant="a", question="q", owner=me.id)
    runs.start_run(run_id="done", tenant="a", question="q", owner=me.id)
    runs.append(_env("done", 0, Done()))
    assert runs.cancel_requests(me) == []
    assert not runs.request_cancel("r", tenant="b")  # another tenant's run
    assert not runs.request_cancel("done", tenant="a")
    assert not runs.request_cancel("nope", tenant="a")
    assert runs.request_cancel("r", tenant="a")
    assert runs.cancel_requests(me) == ["r"]
    assert runs.cancel_requests(Owner.this_process()) == []
    runs.append(_env("r", 0, Done(status="cancelled")))
    assert runs.cancel_requests(me) == []


# ---- jobs ----


def test_jobs_round_trip_on_both_backends(tmp_path: Path, pg_url: str) -> None:
    me = Owner.this_process()
    stores: list[JobRecords] = [JobStore(tmp_path / "jobs.sqlite"), PgJobStore.open(pg_url, owner=me)]
    for jobs in stores:
        job = jobs.create("a", ["x.md", "y.md"])
        assert jobs.get(job.id, tenant="b") is None
        seen = jobs.get(job.id, tenant="a")
        assert seen is not None and seen.status == "queued" and seen.files == ["x.md", "y.md"]
        jobs.set_running(job.id)
        jobs.finish(job.id, result={"documents": 2, "errors": []})
        seen = jobs.get(job.id, tenant="a")
        assert seen is not None and seen.status == "done" and seen.result == {"documents": 2, "errors": []}
        failed = jobs.create("a", ["z.md"])
        jobs.finish(failed.id, error="boom")
        seen = jobs.get(failed.id, tenant="a")
        assert seen is not None and (seen.status, seen.error) == ("failed", "boom") and seen.finished_at
        jobs.close()


def test_postgres_jobs_of_a_dead_owner_fail_and_a_live_replicas_stay(pg_url: str) -> None:
    me, other = Owner.this_process(), Owner(id="far:9:o", host="far", pid=9, started_at=1.0)
    crashed = Owner(id="here:dead", host=me.host, pid=_dead_pid(), started_at=1.0)
    runs = PgTraceStore.open(pg_url)
    for owner in (me, other, crashed):
        runs.heartbeat(owner)
    mine, theirs, lost = (PgJobStore.open(pg_url, owner=o) for o in (me, other, crashed))
    a, b, c = mine.create("t", ["a"]), theirs.create("t", ["b"]), lost.create("t", ["c"])
    lost.set_running(c.id)
    assert mine.interrupt_dead(me, lease_s=30.0) == [c.id]
    assert [mine.get(j.id, tenant="t").status for j in (a, b, c)] == ["queued", "queued", "failed"]  # type: ignore[union-attr]
    for s in (mine, theirs, lost):
        s.close()
    runs.close()


# ---- the document registry ----


def test_registry_versions_pending_commit_abort_delete(registry: DocumentRegistry) -> None:
    w1 = PendingWrite(doc_id="d1", title="One", source="one.md", content_hash="h1", point_ids=["p1", "p2"])
    w2 = PendingWrite(doc_id="d2", title="Two", source="two.md", content_hash="h2", point_ids=["p3"])
    registry.begin("t", [w1, w2])
    assert [e.doc_id for e in registry.pending("t")] == ["d1", "d2"]
    assert registry.committed("t") == []
    registry.commit("t", ["d1", "d2"], [2, 1])
    entry = registry.get("t", "d1")
    assert entry is not None and (entry.content_hash, entry.point_ids, entry.chunks) == ("h1", ["p1", "p2"], 2)
    assert entry.pending_hash is None and len(entry.updated_at) == 19
    assert registry.get("other", "d1") is None
    # a new version of d1 is started, then abandoned: the committed one stays
    registry.begin("t", [PendingWrite("d1", "One v2", "one.md", "h1b", ["p9"])])
    registry.abort("t", "d1")
    entry = registry.get("t", "d1")
    assert entry is not None and entry.content_hash == "h1" and entry.pending_hash is None
    # replace: the committed version is dropped before its points go
    registry.begin("t", [PendingWrite("d2", "Two v2", "two.md", "h2b", ["p4"])])
    registry.drop_committed("t", ["d2"])
    entry = registry.get("t", "d2")
    assert entry is not None and entry.content_hash is None and entry.pending_hash == "h2b"
    registry.abort("t", "d2")  # nothing committed: the row goes
    assert registry.get("t", "d2") is None
    registry.begin_delete("t", "d1")
    entry = registry.get("t", "d1")
    assert entry is not None and entry.pending_hash == DELETING and entry.point_ids == []
    registry.remove("t", "d1")
    assert registry.get("t", "d1") is None and registry.committed("t") == []


def test_registry_values_are_parameters_not_sql(registry: DocumentRegistry) -> None:
    evil = "x'); DROP TABLE documents; --"
    registry.begin(evil, [PendingWrite(evil, evil, evil, evil, [evil])])
    registry.commit(evil, [evil], [1])
    entry = registry.get(evil, evil)
    assert entry is not None and entry.title == evil and entry.point_ids == [evil]


def test_settings_read_the_postgres_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge.settings import Settings

    monkeypatch.setenv("WAYPOINT_POSTGRES_URL", "postgresql://u@h:5432/db")
    assert Settings().postgres_url == "postgresql://u@h:5432/db"
    monkeypatch.delenv("WAYPOINT_POSTGRES_URL")
    assert Settings().postgres_url is None
    assert "WAYPOINT_POSTGRES_URL" not in os.environ


def test_postgres_store_survives_its_connections_being_killed(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from knowledge import postgres

    monkeypatch.setattr(postgres, "_CHECK_IDLE_S", 0.0)  # as if every pooled connection had been idle a while
    store = PgTraceStore.open(pg_url)
    try:
        store.start_run(run_id="r", tenant="a", question="q")
        with psycopg.connect(pg_url, autocommit=True) as admin:  # a Postgres restart / a proxy dropping them
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        time.sleep(0.2)
        run = store.get_run("r", tenant="a")  # the checked-out connection is found dead and replaced
        assert run is not None and run.status == "running"
    finally:
        store.close()
