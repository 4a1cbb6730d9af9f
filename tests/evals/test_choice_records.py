"""``scripts/choice_records.py``: the default's records with ``agent.choice_from_evidence`` applied, rescored."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evals_support import load_script

from evals.records import QuestionRecord, Scores
from evals.store import load_records, records_path

Q = "Which film has the director born later, Alpha or Beta?"
CORPUS = [
    {"id": "p-alpha", "title": "Alpha", "text": "Alpha is a film directed by Ann Lee."},
    {"id": "p-beta", "title": "Beta", "text": "Beta is a film directed by Bob Ray."},
]


def _record(qid: str, question: str, answer: str) -> QuestionRecord:
    return QuestionRecord(
        question_id=qid,
        strategy="agent",
        question=question,
        type="comparison",
        gold_answers=["Beta"],
        gold_ids=["p-beta"],
        answer=answer,
        retrieved_ids=["p-alpha", "p-beta"],
        scores=Scores(em=0.0, f1=0.0),
    )


def test_an_answer_naming_neither_option_is_rescored_as_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out, dest = tmp_path / "data", tmp_path / "run", tmp_path / "choice"
    (data / "2wikimultihopqa").mkdir(parents=True)
    (data / "2wikimultihopqa" / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in CORPUS))
    rows = [_record("q1", Q, "Bob Ray"), _record("q2", Q, "Jane Doe"), _record("q3", "Who directed Beta?", "Ann Lee")]
    questions = [
        {"id": r.question_id, "question": r.question, "answers": r.gold_answers, "supporting_passage_ids": r.gold_ids}
        for r in rows
    ]
    (data / "2wikimultihopqa" / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    path = records_path(out / "2wikimultihopqa" / "agent", "agent")
    path.parent.mkdir(parents=True)
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    argv = ["choice_records.py", "--out", str(out), "--data", str(data), "--dest", str(dest)]
    monkeypatch.setattr(sys, "argv", argv)
    load_script("choice_records").main()
    got = load_records(records_path(dest / "2wikimultihopqa" / "agent_choice", "agent_choice"))
    assert {q: (r.answer, r.scores.f1, r.strategy) for q, r in got.items()} == {
        "q1": ("Beta", 1.0, "agent_choice"),
        "q2": ("Jane Doe", 0.0, "agent_choice"),
        "q3": ("Ann Lee", 0.0, "agent_choice"),
    }
