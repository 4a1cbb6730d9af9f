"""The run store as the viewer uses it: crash-visible runs, listing with filters and pages, retention, tenants."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from uitest_support import envelopes, full_script

from api.routes.traces import purge_expired
from graphs.events import Done, LLMUsage, RunStarted, StepStarted
from graphs.tracing.pg_store import PgTraceStore
from graphs.tracing.run_store import RunStore
from graphs.tracing.spans import build_trace
from graphs.tracing.store import TraceStore
from knowledge.settings import TracesConfig


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """The same tests on both backends (Postgres: the session's test database, emptied)."""
    s: RunStore
    if request.param == "sqlite":
        s = TraceStore.open(tmp_path / "runs.sqlite")
    else:
        s = PgTraceStore.open(request.getfixturevalue("pg_url"))
    yield s
    s.close()


def add_run(
    store: RunStore, run_id: str, *, started: float, tenant: str = "t", thread: str = "th", done: bool = True
) -> None:
    """A run with one usage event (prompt 10, cached 4), finished unless ``done`` is False."""
    store.start_run(run_id=run_id, tenant=tenant, question=f"q {run_id}", thread_id=thread, started_at=started)
    script = [
        (started, RunStarted(question="q")),
        (started + 1, LLMUsage(role="planner", prompt_tokens=10, cached_tokens=4, completion_tokens=2)),
    ]
    if done:
        script.append((started + 2, Done(status="ok")))
    for env in envelopes(run_id, script):
        store.append(env)


def test_crashed_run_stays_visible_as_running(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    writer = TraceStore.open(path)
    writer.start_run(run_id="r1", tenant="t", question="q", started_at=1.0)
    for env in envelopes("r1", full_script()[:8]):  # the process dies during retrieve
        writer.append(env)
    writer.close()  # no done event was written
    reader = TraceStore.open(path)
    try:
        (row,) = reader.list_runs(tenant="t")
        assert (row.id, row.status, row.last_seq) == ("r1", "running", 8)
        trace = build_trace("r1", reader.events("r1", tenant="t"))
        assert trace.path == ["plan", "route", "retrieve"]
        assert [s.status for s in trace.spans if s.kind == "step"] == ["ok", "ok", "running"]
        assert reader.usage_by_run(["r1"], tenant="t")["r1"]["llm_calls"] == 2
    finally:
        reader.close()


def test_list_newest_first_with_keyset_pages(store: RunStore) -> None:
    for i in range(7):
        add_run(store, f"r{i}", started=100.0 + (i // 2))  # pairs share a start time
    seen: list[str] = []
    before = None
    while True:
        page = store.list_runs(tenant="t", limit=3, before=before)
        seen += [r.id for r in page]
        if len(page) < 3:
            break
        before = (page[-1].started_at, page[-1].id)
    assert seen == ["r6", "r5", "r4", "r3", "r2", "r1", "r0"]


def test_list_filters(store: RunStore) -> None:
    add_run(store, "a", started=10.0, thread="x")
    add_run(store, "b", started=20.0, thread="y")
    add_run(store, "c", started=30.0, thread="x", done=False)
    assert [r.id for r in store.list_runs(tenant="t", thread_id="x")] == ["c", "a"]
    assert [r.id for r in store.list_runs(tenant="t", status="running")] == ["c"]
    assert [r.id for r in store.list_runs(tenant="t", status="ok")] == ["b", "a"]
    assert [r.id for r in store.list_runs(tenant="t", since=20.0)] == ["c", "b"]
    assert [r.id for r in store.list_runs(tenant="t", until=20.0)] == ["a"]
    assert store.list_runs(tenant="t", thread_id="x'; DROP TABLE runs; --") == []
    assert len(store.list_runs(tenant="t")) == 3


def test_usage_sums_per_run(store: RunStore) -> None:
    add_run(store, "a", started=1.0)
    store.start_run(run_id="empty", tenant="t", question="q", started_at=2.0)
    usage = store.usage_by_run(["a", "empty", "missing"], tenant="t")
    assert usage == {"a": {"llm_calls": 1, "prompt_tokens": 10, "cached_tokens": 4, "completion_tokens": 2}}
    assert store.usage_by_run([], tenant="t") == {}


def test_tenants_see_only_their_runs(store: RunStore) -> None:
    add_run(store, "mine", started=1.0, tenant="t1")
    add_run(store, "theirs", started=2.0, tenant="t2")
    assert [r.id for r in store.list_runs(tenant="t1")] == ["mine"]
    assert store.usage_by_run(["mine", "theirs"], tenant="t1").keys() == {"mine"}
    assert store.events("theirs", tenant="t1") == []


def test_retention_deletes_old_runs_and_their_events(store: RunStore) -> None:
    day = 86400.0
    now = 100 * day
    add_run(store, "old", started=now - 40 * day)
    add_run(store, "recent", started=now - 5 * day)
    add_run(store, "stale", started=now - 50 * day, done=False)  # crashed long ago
    store.start_run(run_id="fresh", tenant="t", question="q", started_at=now - 60)  # running, no events yet
    assert purge_expired(store, TracesConfig(retention_days=30), now=now) == 2
    assert {r.id for r in store.list_runs(tenant="t")} == {"recent", "fresh"}
    assert store.events("old", tenant="t") == []
    assert len(store.events("recent", tenant="t")) == 3


def test_retention_zero_keeps_everything(store: RunStore) -> None:
    add_run(store, "ancient", started=1.0)
    assert purge_expired(store, TracesConfig(retention_days=0), now=1e12) == 0
    assert [r.id for r in store.list_runs(tenant="t")] == ["ancient"]


def test_running_run_with_recent_events_survives_retention(store: RunStore) -> None:
    day = 86400.0
    store.start_run(run_id="long", tenant="t", question="q", started_at=0.0)
    store.append(envelopes("long", [(40 * day, StepStarted(node="plan", step=1))])[0])
    assert store.purge(older_than=35 * day) == 0
    assert store.purge(older_than=41 * day) == 1
