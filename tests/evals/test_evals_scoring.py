"""Scoring one outcome: answer metrics, retrieved / cited recall and the trajectory summary."""

from __future__ import annotations

import pytest

from evals.datasets import Question
from evals.records import Outcome
from evals.scoring import error_record, make_record

Q = Question(
    id="q",
    question="Where was the engineer of the tower born?",
    answers=["Dijon"],
    supporting_passage_ids=["g1", "g2"],
    type="bridge",
)


def test_agent_like_outcome() -> None:
    outcome = Outcome(
        run_id="run-1",
        answer="He was born in Dijon",
        retrieved_ids=["x", "g1", "x", "y", "z", "w", "g2"],
        retrieved_tools=["vector_search", "vector_search", "graph_search", "graph_search", "tree", "tree", "tree"],
        retrieved_call=[1, 1, 2, 2, 3, 3, 3],
        cited_ids=["g1", "x"],
        tool_calls=["vector_search", "graph_search", "tree"],
        llm_calls=4,
        prompt_tokens=100,
        cached_tokens=60,
        status="ok",
    )
    rec = make_record(Q, "agent", outcome, 1.5)
    assert rec.retrieved_ids == ["x", "g1", "y", "z", "w", "g2"]
    assert rec.scores.em == 0.0
    assert rec.scores.f1 == pytest.approx(2 * (1 / 5) * 1 / (1 / 5 + 1))
    assert rec.scores.recall_2 == 0.5
    assert rec.scores.recall_5 == 0.5
    assert rec.scores.recall_10 == 1.0  # g2 is the 6th distinct passage
    assert rec.scores.all_gold_5 == 0.0
    assert rec.scores.recall_all == 1.0
    assert rec.scores.cited_recall_5 == 0.5
    t = rec.trajectory
    assert t.gold_first_call == 3
    assert t.gold_by_tool == {"g1": ["vector_search"], "g2": ["tree"]}
    assert t.hops == 3
    assert not t.stopped_early and not t.hit_budget


def test_budget_and_early_stop() -> None:
    budget = make_record(Q, "agent", Outcome(answer="x", retrieved_ids=["g1"], status="budget"), 1.0)
    assert budget.trajectory.hit_budget and not budget.trajectory.stopped_early
    early = make_record(Q, "agent", Outcome(answer="x", retrieved_ids=["g1"], status="ok"), 1.0)
    assert early.trajectory.stopped_early and early.trajectory.gold_first_call is None


def test_retrieval_only_has_no_answer_scores() -> None:
    rec = make_record(Q, "bm25", Outcome(retrieved_ids=["g2", "g1"], tool_calls=["bm25"]), 0.01)
    assert rec.scores.em is None and rec.scores.f1 is None and rec.scores.cited_recall_5 is None
    assert rec.scores.recall_2 == 1.0 and rec.scores.all_gold_5 == 1.0


def test_error_record_scores_zero_and_keeps_message() -> None:
    rec = error_record(Q, "agent", "LLMTimeoutError: slow", 3.0, answering=True)
    assert rec.error == "LLMTimeoutError: slow"
    assert rec.scores.em == 0.0 and rec.scores.recall_5 == 0.0 and rec.scores.recall_10 == 0.0
    assert error_record(Q, "bm25", "boom", 0.0, answering=False).scores.f1 is None


def test_record_json_uses_metric_names() -> None:
    rec = make_record(Q, "bm25", Outcome(retrieved_ids=["g1"]), 0.0)
    dumped = rec.model_dump(mode="json")
    assert dumped["scores"]["recall@5"] == 0.5
    assert type(rec).model_validate_json(rec.model_dump_json()) == rec


def test_citation_precision_and_recall_are_scored_per_answer() -> None:
    cited = make_record(Q, "agent", Outcome(answer="Dijon", cited_ids=["g1", "x", "g1"]), 1.0)
    assert cited.scores.citation_precision == 0.5 and cited.scores.citation_recall == 0.5
    retrieval_only = make_record(Q, "hybrid", Outcome(retrieved_ids=["g1"], cited_ids=[]), 1.0)
    assert retrieval_only.scores.citation_precision is None and retrieval_only.scores.citation_recall is None
    uncited = make_record(Q, "agent", Outcome(answer="Dijon"), 1.0)
    assert uncited.scores.citation_precision is None and uncited.scores.citation_recall == 0.0
