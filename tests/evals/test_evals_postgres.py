"""`waypoint eval` keeps its runs where `waypoint serve` does: with `postgres_url` set, in Postgres, not SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from agents.llm import CallOptions, Message
from agents.llm.scripted import ScriptedLLM
from evals.datasets import load_dataset
from evals.runner import EvalConfig, run_eval
from graphs.tracing.pg_store import PgTraceStore
from knowledge.settings import Settings

pytestmark = pytest.mark.postgres

ANSWERS = {"engineer": "Dijon [E1]", "Rome": "yes [E1]", "museum": "the Prado [E1]"}
"""A word of each question -> its scripted single-shot answer."""


def _reply(messages: Sequence[Message], options: CallOptions) -> str:
    text = messages[-1]["content"]
    for word, answer in ANSWERS.items():
        if word in text:
            return answer
    raise AssertionError(f"no scripted reply for {text[-200:]!r}")


async def test_eval_runs_go_to_the_postgres_state_stores(
    settings: Settings, pg_url: str, tiny_dataset: Path, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"postgres_url": pg_url})
    ds = load_dataset(tiny_dataset)
    llm = ScriptedLLM([_reply] * len(ds.questions))
    result = await run_eval(settings, ds, EvalConfig(["single_shot"]), tmp_path / "out", llm=llm)
    records = result.records["single_shot"]
    assert len(records) == 3 and all(r.error is None for r in records), [r.error for r in records]
    assert result.summary["strategies"]["single_shot"]["n"] == 3
    store = PgTraceStore.open(pg_url)
    try:
        for record in records:
            assert record.run_id
            run = store.get_run(record.run_id, tenant=settings.default_tenant)
            assert run is not None, record.run_id  # a replica's /v1/runs/{id} and viewer can open it
            assert run.status == "ok" and store.events(record.run_id, tenant=settings.default_tenant)
    finally:
        store.close()
    for local in ("runs.sqlite", "checkpoints.sqlite", "manifest.sqlite", "jobs.sqlite"):
        assert not settings.path(local).exists(), f"{local} was written although postgres_url is set"
