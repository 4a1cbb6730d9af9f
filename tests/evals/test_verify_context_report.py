"""``scripts/verify_context_report.py``: the verifier's prefilled tokens, verdicts and paired savings read back from
two arms' records and the run store they wrote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from evals_support import load_script, record

from evals.store import append_record, records_path


def _store(path: Path, runs: dict[str, list[tuple[str, int, int]]], verdicts: dict[str, bool]) -> sqlite3.Connection:
    """A runs.sqlite whose runs have usage events (role, prompt, cached) and a verify step's verdict."""
    db = sqlite3.connect(path)
    db.execute("create table events (run_id text, seq integer, ts real, kind text, json text)")
    for run_id, calls in runs.items():
        rows = [
            ("usage", {"role": r, "prompt_tokens": p, "cached_tokens": c, "ttft_s": p / 100, "latency_s": 1.0})
            for r, p, c in calls
        ]
        rows.append(("step_finished", {"node": "verify", "summary": {"supported": verdicts[run_id]}}))
        for seq, (kind, body) in enumerate(rows):
            db.execute("insert into events values (?, ?, 0, ?, ?)", (run_id, seq, kind, json.dumps(body)))
    db.commit()
    return db


def _records(folder: Path, runs: dict[str, str], wall: float) -> Path:
    """An eval run folder whose agent records point at ``runs`` (question id → run id)."""
    for qid, run_id in runs.items():
        append_record(records_path(folder, "agent"), record(qid, latency=wall).model_copy(update={"run_id": run_id}))
    return folder


def test_arms_and_their_pairing(tmp_path: Path) -> None:
    report = load_script("verify_context_report")
    db = _store(
        tmp_path / "runs.sqlite",
        {
            "a1": [("first_pass", 1000, 700), ("verifier", 900, 700)],  # the verifier prefills 200
            "a2": [("first_pass", 1000, 700), ("verifier", 900, 800)],
            "b1": [("first_pass", 1000, 700), ("verifier", 1100, 1050)],  # 50
            "b2": [("first_pass", 1000, 700), ("verifier", 1100, 1080)],
        },
        {"a1": True, "a2": True, "b1": True, "b2": False},
    )
    off = report.arm(db, report.records(_records(tmp_path / "off", {"q1": "a1", "q2": "a2"}, 30.0)))
    on = report.arm(db, report.records(_records(tmp_path / "on", {"q1": "b1", "q2": "b2"}, 27.0)))
    assert off["verifier_calls"] == 2 and off["verifier_prefilled_mean"] == pytest.approx(150)
    assert on["verifier_prefilled_mean"] == pytest.approx(35) and (on["supported"], on["doubted"]) == (1, 1)
    pair = report.paired(off, on)
    assert pair["verdicts_differ"] == 1 and pair["both_verified"] == 2
    assert pair["prefilled_saved_p50"] == pytest.approx((150 + 80) / 2)  # per run: 500 - 350, 400 - 320
    assert pair["wall_saved_p50_s"] == pytest.approx(3.0)
