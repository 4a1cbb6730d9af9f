"""Fixtures of the eval-suite tests: small dataset folders written to tmp dirs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evals_support import PASSAGES, QUESTIONS, write_dataset

from evals.datasets import BUILTIN_DIR


@pytest.fixture
def tiny_dataset(tmp_path: Path) -> Path:
    """Three hand-made questions over six passages."""
    return write_dataset(tmp_path / "tiny", QUESTIONS, PASSAGES)


@pytest.fixture
def make_dataset(tmp_path: Path) -> Callable[[str, list[dict[str, Any]], list[dict[str, str]]], Path]:
    """Write any dataset folder under tmp."""
    return lambda name, questions, passages: write_dataset(tmp_path / name, questions, passages)


@pytest.fixture
def hotpot_subset(tmp_path: Path) -> Path:
    """The first 2 HotpotQA dev questions with their gold passages plus 8 distractors (fast to ingest)."""
    src = BUILTIN_DIR / "hotpotqa"
    questions = [json.loads(line) for line in (src / "dev_questions.jsonl").read_text().splitlines()[:2]]
    corpus = [json.loads(line) for line in (src / "dev_corpus.jsonl").read_text().splitlines()]
    gold = {pid for q in questions for pid in q["supporting_passage_ids"]}
    keep = [p for p in corpus if p["id"] in gold] + [p for p in corpus if p["id"] not in gold][:8]
    return write_dataset(tmp_path / "hotpot-subset", questions, keep)
