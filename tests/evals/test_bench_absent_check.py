"""``scripts/bench_absent_check.py``: the lexical "not found" counted by question kind, and its foreign questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals_support import load_script, write_dataset

from evals.datasets import load_dataset


def row(kind: str, unknown: list[str], ms: float = 1.0) -> dict[str, Any]:
    return {"kind": kind, "from": "x", "id": f"{kind}{ms}", "q": f"q {kind}", "unknown": unknown, "check_ms": ms}


def test_precision_recall_and_latency_count_each_kind() -> None:
    script = load_script("bench_absent_check")
    rows = [
        row("answerable", [], 1.0),
        row("answerable", ["Gothais"], 2.0),  # a false "not found"
        row("absent", ["Mongolia"], 3.0),
        row("absent", [], 4.0),
        row("foreign", ["Oettinger"], 5.0),
        row("foreign", ["Kyoto"], 6.0),
        row("foreign", [], 7.0),
    ]
    out = script.summarise("kb", rows)
    assert out["n"] == {"answerable": 2, "absent": 2, "foreign": 3}
    assert out["flagged"] == {"answerable": 1, "absent": 1, "foreign": 2}
    assert out["precision"] == 0.75 and out["recall"] == 0.6 and out["recall_own_absent"] == 0.5
    assert out["check_ms_p50"] == 4.0 and out["check_ms_p95"] == 6.0
    text = script.table([out])
    assert "| kb | 1 / 2 | 1 / 2 | 2 / 3 | 0.75 | 0.6 | 4.0 / 6.0 |" in text
    assert "Gothais" in text.split("false")[1] and "q absent" in text.split("not flagged")[1]


def test_foreign_questions_are_the_other_sets_questions_whose_gold_titles_the_kb_lacks(tmp_path: Path) -> None:
    script = load_script("bench_absent_check")
    kb_passages = [{"id": "a1", "title": "Paris", "text": "Paris is the capital of France."}]
    other_passages = [
        {"id": "b1", "title": "Paris", "text": "Paris hosts the Louvre."},
        {"id": "b2", "title": "Ulaanbaatar", "text": "Ulaanbaatar is the capital of Mongolia."},
    ]
    questions = [
        {
            "id": "o1",
            "question": "What does Paris host?",
            "answers": ["the Louvre"],
            "supporting_passage_ids": ["b1"],
            "supporting_titles": ["Paris"],
        },
        {
            "id": "o2",
            "question": "What is the capital?",
            "answers": ["Ulaanbaatar"],
            "supporting_passage_ids": ["b2"],
            "supporting_titles": ["Ulaanbaatar"],
        },
        {"id": "o3", "question": "What is Mongolia's flag?", "answers": []},
    ]
    own = [
        {
            "id": "k1",
            "question": "What is the capital of France?",
            "answers": ["Paris"],
            "supporting_passage_ids": ["a1"],
        }
    ]
    kb = load_dataset(str(write_dataset(tmp_path / "kb", own, kb_passages)))
    other = load_dataset(str(write_dataset(tmp_path / "other", questions, other_passages)))
    assert [q.id for q in script.foreign_questions(kb, [other], 5)] == ["o2"]  # o1's gold is in the kb; o3 absent
    assert script.foreign_questions(kb, [other], 0) == []
