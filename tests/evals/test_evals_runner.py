"""The runner: one record per question as it goes, resume after an interruption, errors retried, meta checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evals.datasets import Question, load_dataset
from evals.errors import EvalError
from evals.records import Outcome, QuestionRecord
from evals.runner import EvalConfig, run_eval, run_strategy
from evals.store import load_records, records_path
from evals.strategies.bm25 import BM25Index, BM25Strategy
from knowledge.settings import Settings


class Killed(BaseException):
    """Stands for the process being killed mid-run (not an ``Exception``: the runner must not swallow it)."""


class Interrupting:
    """Wraps the real BM25 strategy; after ``stop_after`` questions it raises ``Killed``."""

    answers = False

    def __init__(self, inner: BM25Strategy, stop_after: int | None = None, fail_ids: frozenset[str] = frozenset()):
        self.name = inner.name
        self.inner = inner
        self.stop_after = stop_after
        self.fail_ids = fail_ids
        self.seen: list[str] = []

    async def run(self, question: Question) -> Outcome:
        if self.stop_after is not None and len(self.seen) >= self.stop_after:
            raise Killed
        self.seen.append(question.id)
        if question.id in self.fail_ids:
            raise RuntimeError(f"tool down for {question.id}")
        return await self.inner.run(question)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


async def test_resume_after_interruption_runs_only_the_rest(tmp_path: Path) -> None:
    ds = load_dataset("hotpotqa")
    questions = ds.questions[:6]
    bm25 = BM25Strategy(BM25Index(ds.corpus), k=5, reader=None)
    path = tmp_path / "records" / "bm25.jsonl"

    first = Interrupting(bm25, stop_after=3)
    with pytest.raises(Killed):
        await run_strategy(first, questions, path)
    assert len(_lines(path)) == 3
    with path.open("a") as fh:  # the kill also cut a write in half
        fh.write('{"question_id": "half-writ')

    second = Interrupting(bm25)
    records = await run_strategy(second, questions, path)
    assert second.seen == [q.id for q in questions[3:]]
    assert [r.question_id for r in records] == [q.id for q in questions]
    assert len(_lines(path)) == 6
    assert all(QuestionRecord.model_validate_json(line) for line in _lines(path))

    third = Interrupting(bm25)
    again = await run_strategy(third, questions, path)
    assert third.seen == [] and again == records


async def test_errors_are_recorded_then_retried(tmp_path: Path) -> None:
    ds = load_dataset("hotpotqa")
    questions = ds.questions[:4]
    bm25 = BM25Strategy(BM25Index(ds.corpus), k=5, reader=None)
    path = tmp_path / "bm25.jsonl"
    failing = Interrupting(bm25, fail_ids=frozenset({questions[1].id}))
    records = await run_strategy(failing, questions, path, concurrency=2)
    assert records[1].error == f"RuntimeError: tool down for {questions[1].id}"
    assert [r.error for i, r in enumerate(records) if i != 1] == [None, None, None]

    retry = Interrupting(bm25)
    records = await run_strategy(retry, questions, path)
    assert retry.seen == [questions[1].id]
    assert records[1].error is None
    assert load_records(path)[questions[1].id].error is None


async def test_concurrency_must_be_positive(tmp_path: Path) -> None:
    ds = load_dataset("hotpotqa")
    bm25 = BM25Strategy(BM25Index(ds.corpus), k=5, reader=None)
    with pytest.raises(EvalError, match="concurrency"):
        await run_strategy(bm25, ds.questions[:1], tmp_path / "x.jsonl", concurrency=0)


async def test_run_eval_bm25_writes_summary_and_resumes(tmp_path: Path, tiny_dataset: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    ds = load_dataset(tiny_dataset)
    out = tmp_path / "out"
    result = await run_eval(settings, ds, EvalConfig(["bm25"], limit=2, retrieval_only=True), out)
    assert result.summary["strategies"]["bm25"]["n"] == 2
    result = await run_eval(settings, ds, EvalConfig(["bm25"], retrieval_only=True), out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary == result.summary
    bm25 = summary["strategies"]["bm25"]
    assert bm25["n"] == 3
    assert bm25["em"] is None and bm25["llm_calls_mean"] is None
    assert 0.0 <= bm25["recall@5"] <= 1.0
    assert len(load_records(records_path(out, "bm25"))) == 3
    assert summary["model"] is None and summary["dataset"] == "tiny"


async def test_output_of_another_dataset_is_refused(tmp_path: Path, tiny_dataset: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    out = tmp_path / "out"
    await run_eval(settings, load_dataset(tiny_dataset), EvalConfig(["bm25"], retrieval_only=True), out)
    with pytest.raises(EvalError, match="another --out"):
        await run_eval(settings, load_dataset("musique"), EvalConfig(["bm25"], retrieval_only=True), out)


async def test_unknown_strategy_names_the_known_ones(tmp_path: Path, tiny_dataset: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    config = EvalConfig(["nosuch"], retrieval_only=True)
    with pytest.raises(EvalError, match=r"unknown strategy .nosuch.; known: .*bm25.*tool:"):
        await run_eval(settings, load_dataset(tiny_dataset), config, tmp_path / "out")


def test_bm25_matches_the_readme_baseline_closely() -> None:
    """README: BM25 Recall@5 75.0 / 70.5 / 50.8; bm25s (Lucene idf) lands within 5 points on each set."""
    expected = {"hotpotqa": 0.750, "2wikimultihopqa": 0.705, "musique": 0.508}
    for name, target in expected.items():
        ds = load_dataset(name)
        bm25 = BM25Strategy(BM25Index(ds.corpus), k=5, reader=None)
        outcomes = [asyncio.run(bm25.run(q)) for q in ds.questions]
        recalls = [
            len(set(o.retrieved_ids[:5]) & set(q.supporting_passage_ids)) / len(q.supporting_passage_ids)
            for o, q in zip(outcomes, ds.questions, strict=True)
        ]
        assert abs(sum(recalls) / len(recalls) - target) <= 0.05, name
