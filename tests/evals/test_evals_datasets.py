"""Dataset loading: the shipped dev sets, users' folders, and clear errors for bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evals_support import PASSAGES, QUESTIONS

from evals.datasets import BUILTIN_NAMES, load_dataset
from evals.errors import DatasetError

MakeDataset = Callable[[str, list[dict[str, Any]], list[dict[str, str]]], Path]


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_shipped_sets_load_by_name(name: str) -> None:
    ds = load_dataset(name)
    assert ds.name == name
    assert len(ds.questions) == 50
    ids = {p.id for p in ds.corpus}
    assert all(set(q.supporting_passage_ids) <= ids for q in ds.questions)
    assert all(q.answers for q in ds.questions)


def test_user_folder_loads(tiny_dataset: Path) -> None:
    ds = load_dataset(tiny_dataset)
    assert [q.id for q in ds.questions] == ["q1", "q2", "q3"]
    assert ds.questions[2].answers == ["the Prado", "Prado museum"]
    assert len(ds.corpus) == 6
    assert len(ds.content_hash) == 64


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(DatasetError, match="'nosuchset'"):
        load_dataset("nosuchset")


def test_missing_corpus_file(tmp_path: Path) -> None:
    folder = tmp_path / "half"
    folder.mkdir()
    (folder / "dev_questions.jsonl").write_text(json.dumps(QUESTIONS[0]) + "\n")
    with pytest.raises(DatasetError, match=r"\*corpus\.jsonl"):
        load_dataset(folder)


def test_bad_line_names_file_and_line(make_dataset: MakeDataset) -> None:
    folder = make_dataset("bad", QUESTIONS, PASSAGES)
    with (folder / "dev_questions.jsonl").open("a") as fh:
        fh.write('{"id": "q4", "question": "no answers field"}\n')
    with pytest.raises(DatasetError, match="line 4"):
        load_dataset(folder)


def test_gold_id_missing_from_corpus(make_dataset: MakeDataset) -> None:
    folder = make_dataset("gap", QUESTIONS, PASSAGES[:-1])  # drops p-madrid, gold of q3
    with pytest.raises(DatasetError, match="p-madrid"):
        load_dataset(folder)


def test_duplicate_question_ids(make_dataset: MakeDataset) -> None:
    folder = make_dataset("dup", [QUESTIONS[0], QUESTIONS[0]], PASSAGES)
    with pytest.raises(DatasetError, match="duplicate question id 'q1'"):
        load_dataset(folder)
