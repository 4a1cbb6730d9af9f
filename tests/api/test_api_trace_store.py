"""The run store, on SQLite and on Postgres alike: written as the run goes, tenant-scoped, replayable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphs.events import Answer, Citation, Done, Envelope, RunStarted, Token
from graphs.tracing.pg_store import PgTraceStore
from graphs.tracing.run_store import RunStore
from graphs.tracing.store import TraceStore, TraceStoreError


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """The same tests against both backends (Postgres: the session's test database, emptied)."""
    if request.param == "sqlite":
        opened: RunStore = TraceStore.open(tmp_path / "runs.sqlite")
    else:
        opened = PgTraceStore.open(request.getfixturevalue("pg_url"))
    yield opened
    opened.close()


def _env(seq: int, event: object, run_id: str = "r1") -> Envelope:
    return Envelope.model_validate({"run_id": run_id, "seq": seq, "ts": 100.0 + seq, "event": event})


def test_in_progress_run_is_visible_and_finishes_with_answer_and_totals(store: RunStore) -> None:
    store.start_run(run_id="r1", tenant="a", question="q?", thread_id="t1")
    store.append(_env(0, RunStarted(question="q?")))
    run = store.get_run("r1", tenant="a")
    assert run is not None and run.status == "running" and run.last_seq == 0 and run.ended_at is None
    store.append(_env(1, Token(text="hi")))
    store.append(_env(2, Answer(text="hi", citations=[Citation(id="e", doc_id="d")])))
    store.append(_env(3, Done(status="ok", totals={"llm_calls": 2})))
    run = store.get_run("r1", tenant="a")
    assert run is not None
    assert (run.status, run.answer, run.totals, run.ended_at, run.last_seq) == ("ok", "hi", {"llm_calls": 2}, 103.0, 3)
    assert [c.id for c in run.citations] == ["e"]


def test_events_replay_after_a_sequence_number_and_round_trip(store: RunStore) -> None:
    store.start_run(run_id="r1", tenant="a", question="q")
    sent = [_env(0, RunStarted(question="q")), _env(1, Token(text="x")), _env(2, Done())]
    for e in sent:
        store.append(e)
    assert store.events("r1", tenant="a") == sent
    assert store.events("r1", tenant="a", after_seq=1) == sent[2:]


def test_other_tenant_sees_nothing(store: RunStore) -> None:
    store.start_run(run_id="r1", tenant="a", question="q", thread_id="t1")
    store.append(_env(0, RunStarted(question="q")))
    assert store.get_run("r1", tenant="b") is None
    assert store.events("r1", tenant="b") == []
    assert store.thread_runs("t1", tenant="b") == []
    assert not store.thread_exists("t1", tenant="b")
    assert store.thread_exists("t1", tenant="a")


def test_thread_lists_turns_in_order(store: RunStore) -> None:
    store.start_run(run_id="r1", tenant="a", question="first", thread_id="t", started_at=1.0)
    store.start_run(run_id="r2", tenant="a", question="second", thread_id="t", started_at=2.0)
    assert [r.question for r in store.thread_runs("t", tenant="a")] == ["first", "second"]


def test_misuse_is_a_typed_error_and_changes_nothing(store: RunStore) -> None:
    with pytest.raises(TraceStoreError, match="unknown run"):
        store.append(_env(0, RunStarted(question="q"), run_id="nope"))
    store.start_run(run_id="r1", tenant="a", question="q")
    with pytest.raises(TraceStoreError, match="already exists"):
        store.start_run(run_id="r1", tenant="b", question="q")
    store.append(_env(0, RunStarted(question="q")))
    with pytest.raises(TraceStoreError, match="seq 0"):
        store.append(_env(0, Done()))
    run = store.get_run("r1", tenant="a")
    assert run is not None and run.status == "running" and run.tenant == "a"
    assert len(store.events("r1", tenant="a")) == 1


def test_store_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    first = TraceStore.open(path)
    first.start_run(run_id="r1", tenant="a", question="q")
    first.append(_env(0, RunStarted(question="q")))
    first.close()
    again = TraceStore.open(path)
    run = again.get_run("r1", tenant="a")
    assert run is not None and run.status == "running"
    assert len(again.events("r1", tenant="a")) == 1
