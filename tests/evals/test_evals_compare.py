"""Compare: paired bootstrap deltas and verdicts on synthetic records, and the folder-level entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from evals_support import record

from evals.compare import compare_outputs, compare_records, paired_delta, verdict
from evals.errors import EvalError
from evals.store import append_record, records_path, write_meta


def _by_id(records: list) -> dict:  # type: ignore[type-arg]
    return {r.question_id: r for r in records}


def test_verdict_rules() -> None:
    assert verdict(0.1, 0.02, 0.2, True) == "better"
    assert verdict(0.1, 0.02, 0.2, False) == "worse"
    assert verdict(-0.1, -0.2, -0.01, True) == "worse"
    assert verdict(-0.1, -0.2, -0.01, False) == "better"
    assert verdict(0.01, -0.05, 0.07, True) == "noise"
    assert verdict(0.0, 0.0, 0.0, True) == "same"


def test_clear_improvement_is_better() -> None:
    base = [record(str(i), f1=0.2, latency=2.0) for i in range(30)]
    cand = [record(str(i), f1=0.8, latency=1.0) for i in range(30)]
    deltas = {d.metric: d for d in compare_records("agent", _by_id(base), _by_id(cand))}
    assert deltas["f1"].delta == pytest.approx(0.6)
    assert deltas["f1"].verdict == "better"
    assert deltas["latency_s"].verdict == "better"  # lower is better
    assert deltas["em"].verdict == "same"
    assert deltas["cached_share"].verdict == "same"


def test_mixed_changes_are_noise() -> None:
    base = [record(str(i), f1=float(i % 2)) for i in range(20)]
    cand = [record(str(i), f1=float((i + 1) % 2)) for i in range(20)]  # every answer flips, the mean stays
    f1 = next(d for d in compare_records("agent", _by_id(base), _by_id(cand)) if d.metric == "f1")
    assert f1.delta == 0.0
    assert f1.ci_low < 0 < f1.ci_high
    assert f1.verdict == "noise"


def test_pairs_only_shared_questions_and_skips_missing_metrics() -> None:
    base = [record(str(i), em=None, f1=None) for i in range(5)]
    cand = [record(str(i), em=None, f1=None) for i in range(3, 10)]
    deltas = compare_records("bm25", _by_id(base), _by_id(cand))
    assert {d.n for d in deltas} == {2}
    assert "f1" not in {d.metric for d in deltas}


def test_bootstrap_interval_is_deterministic_and_brackets_delta() -> None:
    a = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]
    b = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    one = paired_delta("s", "em", a, b, higher_is_better=True, seed=3)
    two = paired_delta("s", "em", a, b, higher_is_better=True, seed=3)
    assert one == two
    assert one.delta == pytest.approx(0.25)
    assert one.ci_low <= one.delta <= one.ci_high


def test_compare_outputs_needs_same_dataset(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_meta(a, {"content_hash": "x"})
    write_meta(b, {"content_hash": "y"})
    with pytest.raises(EvalError, match="different datasets"):
        compare_outputs(a, b)
    write_meta(b, {"content_hash": "x"})
    for i in range(4):
        append_record(records_path(a, "agent"), record(str(i), f1=0.0))
        append_record(records_path(b, "agent"), record(str(i), f1=1.0))
    f1 = next(d for d in compare_outputs(a, b) if d.metric == "f1")
    assert (f1.baseline, f1.candidate, f1.verdict) == (0.0, 1.0, "better")


def test_compare_two_strategies_of_one_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_meta(out, {"content_hash": "x"})
    for i in range(6):
        append_record(records_path(out, "single_shot"), record(str(i), f1=0.25))
    for i in range(4):  # paired on the questions both answered
        append_record(records_path(out, "agent"), record(str(i), f1=0.75))
    deltas = compare_outputs(out, out, strategies=("single_shot", "agent"))
    f1 = next(d for d in deltas if d.metric == "f1")
    assert (f1.strategy, f1.n, f1.baseline, f1.candidate) == ("single_shot → agent", 4, 0.25, 0.75)
    assert f1.verdict == "better"
    with pytest.raises(EvalError, match="no records of strategy 'tree'"):
        compare_outputs(out, out, strategies=("single_shot", "tree"))
