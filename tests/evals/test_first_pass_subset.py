"""``scripts/first_pass_subset.py``: a first-pass candidate runs where the default accepted its first pass (plus
controls), and its records over the sample are its own there and the default's elsewhere."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from evals_support import load_script

from evals.records import QuestionRecord
from evals.store import load_records, records_path
from graphs.events import Done, Envelope, StepFinished
from graphs.tracing.store import TraceStore

# question id -> (the run's first_pass total, its first decide step's decision)
RUNS = {
    "q1": ("accepted", "answer"),
    "q2": ("replanned", "answer"),  # the first pass was accepted, a later step replanned: the check ran
    "q3": ("replanned", "replan"),
    "q4": ("skipped", "replan"),
    "q5": ("replanned", "replan"),
}


def _record(strategy: str, qid: str, answer: str) -> QuestionRecord:
    return QuestionRecord(
        question_id=qid,
        strategy=strategy,
        question=f"question {qid}?",
        type="2hop",
        gold_answers=["x"],
        gold_ids=[],
        run_id=f"run-{qid}",
        answer=answer,
    )


def _write(path: Path, rows: list[QuestionRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")


def test_selects_what_the_candidate_can_change_and_composes_its_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("first_pass_subset")
    data, out = tmp_path / "data" / "musique", tmp_path / "run"
    data.mkdir(parents=True)
    questions = [
        {"id": q, "question": f"Who is {q}?", "answers": ["a"], "supporting_passage_ids": ["p1"]} for q in RUNS
    ]
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    (data / "corpus.jsonl").write_text('{"id": "p1", "title": "T", "text": "t"}\n', encoding="utf-8")
    _write(records_path(out / "musique" / "agent", "agent"), [_record("agent", q, "a") for q in RUNS])
    store = TraceStore.open(tmp_path / "runs.sqlite")
    try:
        for qid, (outcome, decision) in RUNS.items():
            run_id = f"run-{qid}"
            store.start_run(run_id=run_id, tenant="default", question=qid, started_at=1.0)
            decided = StepFinished(node="decide", step=4, duration_s=0.1, summary={"decision": decision})
            store.append(Envelope(run_id=run_id, seq=0, ts=2.0, event=decided))
            store.append(Envelope(run_id=run_id, seq=1, ts=3.0, event=Done(totals={"first_pass": outcome})))
    finally:
        store.close()
    subset = tmp_path / "subset"
    script.select(
        argparse.Namespace(
            out=out,
            store=str(tmp_path / "runs.sqlite"),
            data=tmp_path / "data",
            dest=subset,
            controls=1,
            strategy="agent",
            tenant="default",
        )
    )
    selection = json.loads((subset / "musique" / "selection.json").read_text())
    assert selection["accepted"] == ["q1", "q2"] and selection["controls"] == ["q3"]
    chosen = [json.loads(line)["id"] for line in (subset / "musique" / "questions.jsonl").read_text().splitlines()]
    assert chosen == ["q1", "q2", "q3"]
    assert (subset / "musique" / "corpus.jsonl").read_text() == (data / "corpus.jsonl").read_text()

    cand = tmp_path / "cand"
    ran = [_record("agent_bridge", "q1", "b"), _record("agent_bridge", "q2", "a"), _record("agent_bridge", "q3", "a")]
    _write(records_path(cand / "musique" / "agent_bridge", "agent_bridge"), ran)
    rest = tmp_path / "rest"
    script.compose(
        argparse.Namespace(out=out, candidate_out=cand, candidate="agent_bridge", dest=rest, strategy="agent")
    )
    kept = load_records(records_path(rest / "musique" / "agent_bridge", "agent_bridge"))
    assert sorted(kept) == ["q4", "q5"] and {r.strategy for r in kept.values()} == {"agent_bridge"}
    assert "answers changed: ['q1']" in capsys.readouterr().out
