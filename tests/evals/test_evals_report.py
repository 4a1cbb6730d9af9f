"""Report files from a real BM25 run, and the CLI commands end to end (no LLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from evals.report import worst


@pytest.fixture
def bm25_out(tmp_path: Path, tiny_dataset: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["eval", "--dataset", str(tiny_dataset), "-s", "bm25", "--retrieval-only", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def test_eval_cli_writes_records_summary_and_report(bm25_out: Path) -> None:
    summary = json.loads((bm25_out / "summary.json").read_text())
    assert summary["strategies"]["bm25"]["n"] == 3
    assert len((bm25_out / "records" / "bm25.jsonl").read_text().splitlines()) == 3
    md = (bm25_out / "report.md").read_text()
    assert "| bm25 | 3 |" in md
    assert "## By question type" in md and "| bm25 | comparison | 1 |" in md
    assert "## Worst failures" in md
    html = (bm25_out / "report.html").read_text()
    assert "<table>" in html and "plots/recall_at_5.png" in html
    png = bm25_out / "plots" / "recall_at_5.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (bm25_out / "plots" / "f1.png").exists()  # retrieval only: no F1 figure to plot


def test_report_and_compare_commands(bm25_out: Path) -> None:
    runner = CliRunner()
    (bm25_out / "report.md").unlink()
    result = runner.invoke(app, ["eval", "report", str(bm25_out)])
    assert result.exit_code == 0, result.output
    assert (bm25_out / "report.md").exists()
    result = runner.invoke(app, ["eval", "compare", str(bm25_out), str(bm25_out), "--json"])
    assert result.exit_code == 0, result.output
    deltas = json.loads(result.output)
    assert {d["metric"] for d in deltas} >= {"recall@2", "recall@5", "all_gold@5"}
    assert all(d["verdict"] == "same" for d in deltas if d["metric"] != "latency_s")
    result = runner.invoke(app, ["eval", "compare", str(bm25_out), "-s", "bm25", "-s", "bm25", "--json"])
    assert result.exit_code == 0, result.output
    assert {d["strategy"] for d in json.loads(result.output)} == {"bm25"}
    for args in ([str(bm25_out)], [str(bm25_out), "-s", "bm25"]):  # one folder needs two strategies
        result = runner.invoke(app, ["eval", "compare", *args])
        assert result.exit_code == 2
        said = " ".join(result.output.split())
        assert "-s BASE -s CAND" in said or "--strategy twice" in said


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "--dataset", "nosuchset", "-s", "bm25", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "nosuchset" in result.output
    result = runner.invoke(app, ["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 1
    assert "is not an eval output folder" in " ".join(result.output.split())


def test_worst_puts_errors_then_low_scores_first() -> None:
    from evals_support import record

    recs = [record("ok", f1=0.9), record("bad", f1=0.1), record("err", f1=0.0, error="x"), record("mid", f1=0.5)]
    assert [r.question_id for r in worst(recs, 3)] == ["err", "bad", "mid"]


def test_report_refuses_mixed_provenance_unless_asked(bm25_out: Path) -> None:
    path = bm25_out / "records" / "bm25.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    assert len(first["provenance"]) == 12  # the CLI run stamped its records
    lines = path.read_text().splitlines()
    lines[0] = json.dumps({**first, "provenance": "0123456789ab"})  # as if one question came from another run
    path.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    refused = runner.invoke(app, ["eval", "report", str(bm25_out)])
    assert refused.exit_code == 1 and "--allow-mixed-provenance" in " ".join(refused.output.split())
    merged = runner.invoke(app, ["eval", "report", str(bm25_out), "--allow-mixed-provenance"])
    assert merged.exit_code == 0, merged.output
    assert len(json.loads((bm25_out / "summary.json").read_text())["provenance_ids"]) == 2
    assert "records from 2 provenances merged on request" in (bm25_out / "report.md").read_text()
