"""``scripts/bench_agent_sets.py``: a confirmation run pooled with an earlier run's records of other questions."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from evals_support import load_script, record

from evals.datasets import Dataset
from evals.store import append_record, records_path

SETS = ["hotpotqa"]
STRATEGIES = ["agent_first_pass", "agent_first_pass_plain"]


def _bench() -> ModuleType:
    return load_script("bench_agent_sets")


def _run(out: Path, ids: list[str], f1: dict[str, float]) -> Path:
    """One bench OUT: each strategy's records for ``ids``, F1 by strategy."""
    for s in STRATEGIES:
        for qid in ids:
            append_record(records_path(out / "hotpotqa" / s, s), record(qid, strategy=s, f1=f1[s]))
    return out


def test_pool_reports_both_runs_questions_paired(tmp_path: Path) -> None:
    bench = _bench()
    early = _run(tmp_path / "early", ["q1", "q2"], {"agent_first_pass": 1.0, "agent_first_pass_plain": 0.0})
    late = _run(tmp_path / "late", ["q3"], {"agent_first_pass": 0.0, "agent_first_pass_plain": 1.0})
    alone = bench.report(late, SETS, STRATEGIES, None)["sets"]["hotpotqa"]
    pooled = bench.report(late, SETS, STRATEGIES, None, [early])
    entry = pooled["sets"]["hotpotqa"]
    assert alone["n"] == 1 and entry["n"] == 3 and pooled["pooled_with"] == [str(early)]
    assert entry["strategies"]["agent_first_pass"]["f1"] == pytest.approx(66.7)
    f1 = next(d for d in entry["paired"] if d["metric"] == "f1")
    assert f1["n"] == 3 and f1["delta"] == pytest.approx(100 * (2 - 1) / 3, abs=0.01)
    assert "Pooled with the records of" in bench.render(pooled)


def test_pool_refuses_a_question_measured_in_both_runs(tmp_path: Path) -> None:
    bench = _bench()
    early = _run(tmp_path / "early", ["q1"], {s: 1.0 for s in STRATEGIES})
    late = _run(tmp_path / "late", ["q1"], {s: 0.0 for s in STRATEGIES})
    with pytest.raises(SystemExit, match="q1"):
        bench.report(late, SETS, STRATEGIES, None, [early])


def test_skip_drops_the_first_questions_and_a_folder_runs_under_its_own_name(tmp_path: Path) -> None:
    bench = _bench()
    questions = tuple(object() for _ in range(5))
    dataset = Dataset("mixed21", tmp_path / "q.jsonl", None, questions, ())  # type: ignore[arg-type]
    assert bench.skip(dataset, 2).questions == questions[2:] and bench.skip(dataset, 0) is dataset
    assert bench.set_dir("hotpotqa") == "hotpotqa"
    assert bench.set_dir(str(tmp_path / "runs" / "mixed21")) == "mixed21"


def test_all_sets_pairs_every_sets_questions_as_one_sample(tmp_path: Path) -> None:
    bench = _bench()
    out = tmp_path / "out"
    for name, f1 in (("hotpotqa", {"agent_first_pass": 1.0, "agent_first_pass_plain": 0.0}), ("musique", None)):
        for s in STRATEGIES:
            for qid in ("a", "b"):
                value = f1[s] if f1 else (0.0 if s == "agent_first_pass" else 1.0)
                append_record(records_path(out / name / s, s), record(f"{name}-{qid}", strategy=s, f1=value))
    result = bench.report(out, ["hotpotqa", "musique"], STRATEGIES, None)
    f1 = next(d for d in result["all_sets"] if d["metric"] == "f1")
    assert f1["n"] == 4 and f1["delta"] == pytest.approx(0.0)  # +100 on one set, -100 on the other
    assert {d["metric"] for d in result["all_sets"]} == {"f1", "llm_calls"}
    assert "| all sets | agent_first_pass - agent_first_pass_plain | f1 | 4 |" in bench.render(result)
    assert "all_sets" not in bench.report(out, ["hotpotqa"], STRATEGIES, None)  # one set: nothing to pool


def test_only_reports_the_named_questions(tmp_path: Path) -> None:
    bench = _bench()
    out = _run(tmp_path / "out", ["q1", "q2", "q3"], {"agent_first_pass": 1.0, "agent_first_pass_plain": 0.0})
    part = bench.report(out, SETS, STRATEGIES, None, None, {"hotpotqa": {"q2", "q3", "q9"}})
    entry = part["sets"]["hotpotqa"]
    assert entry["n"] == 2 and next(d for d in entry["paired"] if d["metric"] == "f1")["n"] == 2
    assert bench.report(out, SETS, STRATEGIES, None)["sets"]["hotpotqa"]["n"] == 3
    assert "Questions 31-50 of each set only." in bench.render(part | {"questions": "31-50"})
