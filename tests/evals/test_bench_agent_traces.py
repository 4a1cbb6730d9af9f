"""``scripts/bench_agent.py --traces`` reads the eval's runs from either state store: SQLite or Postgres."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from evals_support import load_script

from graphs.events import Answer, Envelope, LLMUsage, RunEvent
from graphs.tracing.pg_store import PgTraceStore
from graphs.tracing.run_store import RunStore
from graphs.tracing.store import TraceStore


def _bench() -> ModuleType:
    return load_script("bench_agent")


def _fill(store: RunStore) -> list[dict[str, Any]]:
    """Two eval runs (a verified right answer, a doubted wrong one); their records as the eval wrote them."""
    script: dict[str, list[RunEvent]] = {
        "r1": [
            LLMUsage(role="router", prompt_tokens=100, cached_tokens=60, completion_tokens=10, latency_s=1.0),
            LLMUsage(role="answerer", prompt_tokens=300, cached_tokens=100, completion_tokens=20, latency_s=3.0),
            Answer(text="Dijon [E1]", verified=True),
        ],
        "r2": [
            LLMUsage(role="answerer", prompt_tokens=200, cached_tokens=0, completion_tokens=30, latency_s=2.0),
            Answer(text="Lyon [E1]", verified=False),
        ],
    }
    for run_id, events in script.items():
        store.start_run(run_id=run_id, tenant="default", question="q", started_at=1.0)
        for seq, event in enumerate(events):
            store.append(Envelope(run_id=run_id, seq=seq, ts=2.0 + seq, event=event))
    return [
        {"run_id": "r1", "answer": "Dijon", "scores": {"f1": 1.0}},
        {"run_id": "r2", "answer": "Lyon", "scores": {"f1": 0.0}},
        {"run_id": "", "answer": None, "scores": {}},  # a record whose run failed to start
    ]


def _tabulated(store: RunStore, tenant: str = "default") -> tuple[Any, Any]:
    bench = _bench()
    rows = _fill(store)
    return bench.role_costs(store, rows, tenant=tenant), bench.verdicts(store, rows, tenant=tenant)


EXPECTED_ROLES = {  # means over the 2 records with a run
    "answerer": {
        "calls": 1.0,
        "uncached_tokens": 200.0,
        "completion_tokens": 25.0,
        "prefill_s": 0.0,
        "llm_s": 2.5,
        "share_of_llm_s": 0.833,
    },
    "router": {
        "calls": 0.5,
        "uncached_tokens": 20.0,
        "completion_tokens": 5.0,
        "prefill_s": 0.0,
        "llm_s": 0.5,
        "share_of_llm_s": 0.167,
    },
}
EXPECTED_VERDICTS = {"other": {"verified": {"right": 1}, "doubted": {"wrong": 1}}}


def test_reads_the_sqlite_run_store(tmp_path: Path) -> None:
    store = TraceStore.open(tmp_path / "runs.sqlite")
    try:
        roles, verdicts = _tabulated(store)
    finally:
        store.close()
    assert roles == EXPECTED_ROLES and verdicts == EXPECTED_VERDICTS
    assert isinstance(_bench().open_traces(str(tmp_path / "runs.sqlite")), TraceStore)
    with pytest.raises(SystemExit, match="no such run store"):
        _bench().open_traces(str(tmp_path / "missing.sqlite"))


@pytest.mark.postgres
def test_reads_the_postgres_run_store_the_same(pg_url: str) -> None:
    store = _bench().open_traces(pg_url)
    assert isinstance(store, PgTraceStore)
    try:
        roles, verdicts = _tabulated(store)
        other_tenant = _bench().role_costs(store, [{"run_id": "r1"}], tenant="someone-else")
    finally:
        store.close()
    assert roles == EXPECTED_ROLES and verdicts == EXPECTED_VERDICTS
    assert other_tenant == {}  # another tenant's runs are not read
