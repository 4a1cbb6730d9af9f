"""summary.json: the documented keys, rates in 0-1, None where a strategy has no such figure."""

from __future__ import annotations

import pytest
from evals_support import record

from evals.summary import build_summary, summarize

REQUIRED = {
    "n",
    "em",
    "f1",
    "recall@2",
    "recall@5",
    "all_gold@5",
    "llm_calls_mean",
    "prompt_tokens_mean",
    "cached_tokens_mean",
    "cached_share",
    "latency_p50_s",
    "latency_p95_s",
}


def test_summary_schema_and_hand_computed_values() -> None:
    records = [
        record("a", em=1.0, f1=1.0, r2=1.0, r5=1.0, llm_calls=2, prompt=100, cached=80, latency=1.0),
        record("b", em=0.0, f1=0.5, r2=0.0, r5=0.5, llm_calls=4, prompt=300, cached=120, latency=3.0,
               qtype="comparison", tools=("vector_search", "graph_search")),
        record("c", em=0.0, f1=0.0, r2=0.5, r5=0.5, llm_calls=0, prompt=0, cached=0, latency=2.0, error="boom"),
    ]  # fmt: skip
    doc = build_summary({"dataset": "tiny", "model": "m", "backend": "b", "k": 5}, {"agent": records})
    assert {"dataset", "model", "backend", "strategies"} <= set(doc)
    s = doc["strategies"]["agent"]
    assert set(s) >= REQUIRED
    assert s["n"] == 3
    assert s["em"] == pytest.approx(1 / 3)
    assert s["f1"] == pytest.approx(0.5)
    assert s["recall@2"] == pytest.approx(0.5)
    assert s["recall@5"] == pytest.approx(2 / 3)
    assert s["all_gold@5"] == pytest.approx(1 / 3)
    assert s["llm_calls_mean"] == pytest.approx(2.0)
    assert s["prompt_tokens_mean"] == pytest.approx(400 / 3)
    assert s["cached_share"] == pytest.approx(200 / 400)
    assert s["latency_p50_s"] == 2.0
    assert s["latency_p95_s"] == pytest.approx(2.9)
    assert s["errors"] == 1
    assert s["tool_choices"] == {"graph_search": pytest.approx(0.25), "vector_search": pytest.approx(0.75)}
    assert s["hops_mean"] == pytest.approx(4 / 3)
    assert s["by_type"]["comparison"] == {"n": 1, "em": 0.0, "f1": 0.5, "recall@5": 0.5, "section_recall": None}
    for key in ("em", "f1", "recall@2", "recall@5", "all_gold@5", "cached_share"):
        assert 0.0 <= s[key] <= 1.0


def test_retrieval_only_strategy_has_nulls() -> None:
    records = [record(q, em=None, f1=None, llm_calls=0, prompt=0, cached=0, tools=("bm25",)) for q in "abc"]
    s = summarize(records).model_dump(mode="json")
    for key in ("em", "f1", "llm_calls_mean", "prompt_tokens_mean", "cached_tokens_mean", "cached_share"):
        assert s[key] is None, key
    assert s["recall@5"] == 1.0


def test_citation_precision_and_recall_reach_summary_json() -> None:
    from evals.datasets import Question
    from evals.records import Outcome
    from evals.scoring import make_record

    q = Question(id="q", question="?", answers=["a"], supporting_passage_ids=["g1", "g2"])
    records = [
        make_record(q, "agent", Outcome(answer="a", cited_ids=["g1", "g2"]), 1.0),  # P 1, R 1
        make_record(q, "agent", Outcome(answer="a", cited_ids=["g1", "x"]), 1.0),  # P 0.5, R 0.5
        make_record(q, "agent", Outcome(answer="a"), 1.0),  # nothing cited: P None (left out), R 0
    ]
    s = build_summary({"dataset": "tiny"}, {"agent": records})["strategies"]["agent"]
    assert s["citation_precision"] == pytest.approx(0.75)
    assert s["citation_recall"] == pytest.approx(0.5)
    only = summarize([make_record(q, "hybrid", Outcome(retrieved_ids=["g1"]), 1.0)]).model_dump(mode="json")
    assert only["citation_precision"] is None and only["citation_recall"] is None


def test_radix_cached_share_beside_cached_share_over_measured_records() -> None:
    records = [
        record("a", llm_calls=3, prompt=1000, cached=600).model_copy(
            update={"radix_prompt_tokens": 1000, "radix_cached_tokens": 900}
        ),
        record("b", llm_calls=3, prompt=500, cached=100).model_copy(
            update={"radix_prompt_tokens": 500, "radix_cached_tokens": 300}
        ),
        record("c", llm_calls=1, prompt=200, cached=0),  # its backend could not tokenize: left out of the radix share
    ]
    s = build_summary({}, {"agent": records})["strategies"]["agent"]
    assert s["radix_cached_share"] == pytest.approx((900 + 300) / 1500)  # 1 - ideal prefill (300) / 1500
    assert s["cached_share"] == pytest.approx(700 / 1700)
    unmeasured = summarize([record("d", llm_calls=1, prompt=10, cached=5)]).model_dump(mode="json")
    assert unmeasured["radix_cached_share"] is None
