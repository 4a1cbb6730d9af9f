"""``scripts/hop_report.py``: the hop correction's runs, paired with the same questions without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals_support import load_script

from graphs.events import Done, Envelope
from graphs.tracing.store import TraceStore

QUESTION = "Who is the sibling of the performer of Decade?"


def _record(strategy: str, qid: str, run_id: str, answer: str, f1: float, calls: int, wall: float) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question": QUESTION if qid == "q1" else "Who performed Decade?",
        "strategy": strategy,
        "run_id": run_id,
        "answer": answer,
        "gold_answers": ["Astrid Young"],
        "scores": {"f1": f1},
        "llm_calls": calls,
        "latency_s": wall,
    }


def _write(folder: Path, strategy: str, rows: list[dict[str, Any]]) -> None:
    path = folder / strategy / "records" / f"{strategy}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_counts_the_runs_the_hop_fired_on_against_the_same_questions_without_it(tmp_path: Path) -> None:
    folder = tmp_path / "out" / "musique"
    _write(
        folder,
        "agent_first_pass",
        [
            _record("agent_first_pass", "q1", "r1", "Astrid Young", 1.0, 3, 50.0),
            _record("agent_first_pass", "q2", "r2", "Neil Young", 1.0, 2, 20.0),
        ],
    )
    _write(
        folder,
        "agent_no_hop",
        [
            _record("agent_no_hop", "q1", "n1", "Neil Young", 0.0, 2, 25.0),
            _record("agent_no_hop", "q2", "n2", "Neil Young", 1.0, 2, 20.0),
        ],
    )
    store = TraceStore.open(tmp_path / "runs.sqlite")
    try:
        hop = {"kind": "hop", "accepted": True}
        for run_id, corrections in (("r1", [hop]), ("r2", []), ("n1", []), ("n2", [])):
            store.start_run(run_id=run_id, tenant="default", question="q", started_at=1.0)
            done = Done(totals={"corrections": corrections})
            store.append(Envelope(run_id=run_id, seq=0, ts=2.0, event=done))
        row = load_script("hop_report").one_set(
            folder, store, with_="agent_first_pass", without="agent_no_hop", tenant="default"
        )
    finally:
        store.close()
    assert (row["paired"], row["describes_an_entity"], row["hop_fired"], row["hop_answer_accepted"]) == (2, 1, 1, 1)
    assert row["hop_runs_right"] == {"with": 1, "without": 0}
    assert row["hop_runs_f1"] == {"with": 100.0, "without": 0.0}
    assert row["hop_runs_wall_p50_s"] == {"with": 50.0, "without": 25.0}
    assert [h["id"] for h in row["hop_runs"]] == ["q1"]
