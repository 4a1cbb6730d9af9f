"""``scripts/absent_names.py``: names a question gives that its knowledge base never mentions."""

from __future__ import annotations

import json
from pathlib import Path

from evals_support import load_script

KB = "postgresql writes log_rotation_age files. datetime maxyear is 9999. paris is the capital of france."


def test_unknown_names_are_the_names_and_identifiers_the_knowledge_base_never_has() -> None:
    script = load_script("absent_names")
    vocab = set(script.tokens(KB))
    unknown = script.unknown_names
    assert unknown("What is the capital of Mongolia?", KB, vocab) == ["Mongolia"]
    assert unknown("What is the capital of France?", KB, vocab) == []
    # an identifier is matched whole, a dotted one by its last part
    assert unknown("What is PostgreSQL's log_compression default?", KB, vocab) == ["log_compression"]
    assert unknown("What is PostgreSQL's log_rotation_age default?", KB, vocab) == []
    assert unknown("What is datetime.MAXYEAR in Python?", KB, vocab) == ["Python"]
    # the first word, and tokens under three characters ("Th" of "5Th"), are not names
    assert unknown("Mongolia's capital is what?", KB, vocab) == []
    assert unknown("Who was the 5Th Earl of France?", KB, vocab) == ["Earl"]


def test_a_dataset_folder_is_counted_by_absent_and_answerable(tmp_path: Path) -> None:
    corpus = [{"id": "p1", "title": "Paris", "text": "Paris is the capital of France."}]
    questions = [
        {
            "id": "q1",
            "question": "What is the capital of France?",
            "answers": ["Paris"],
            "supporting_passage_ids": ["p1"],
        },
        {"id": "q2", "question": "What is the capital of Mongolia?", "answers": []},
    ]
    (tmp_path / "dev_corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in corpus))
    (tmp_path / "dev_questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    out = load_script("absent_names").measure(str(tmp_path))
    assert (out["absent"], out["absent_with_unknown_name"]) == (1, 1)
    assert (out["answerable"], out["answerable_with_unknown_name"]) == (1, 0)
    assert [f["id"] for f in out["flagged"]] == ["q2"]
