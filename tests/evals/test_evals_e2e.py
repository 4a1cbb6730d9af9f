"""End to end with real parts: MiniLM + local Qdrant ingestion, and the real embedded 0.5B model (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.llm.openai_compat import OpenAICompatibleLLM
from evals.datasets import load_dataset
from evals.resources import tenant_for
from evals.runner import EvalConfig, run_eval
from graphs.tracing.store import TraceStore
from knowledge.settings import AgentConfig, Settings


@pytest.mark.slow
async def test_vector_retrieval_only_ingests_once(settings: Settings, tmp_path: Path, hotpot_subset: Path) -> None:
    ds = load_dataset(hotpot_subset)
    config = EvalConfig(["vector", "hybrid", "bm25"], retrieval_only=True)
    result = await run_eval(settings, ds, config, tmp_path / "out")
    marker = settings.data_dir / "evals" / "tenants" / f"{tenant_for(ds)}.json"
    report = json.loads(marker.read_text())["report"]
    assert report["added"] == len(ds.corpus) and report["failed"] == 0
    for name in ("vector", "hybrid", "bm25"):
        s = result.summary["strategies"][name]
        assert s["n"] == 2 and s["errors"] == 0
        assert s["recall@5"] > 0.5, name  # 12 passages, 4 of them gold: any working retriever finds most
        assert s["llm_calls_mean"] is None
    assert result.summary["model"] is None
    marker.write_text(marker.read_text().replace('"added"', '"added_before"'))
    again = await run_eval(settings, ds, config, tmp_path / "again")
    assert "added_before" in marker.read_text()  # the cached tenant was reused, not ingested anew
    assert again.summary["strategies"]["hybrid"]["recall@5"] == result.summary["strategies"]["hybrid"]["recall@5"]


@pytest.mark.slow
async def test_small_eval_with_the_real_model(
    settings: Settings, tmp_path: Path, hotpot_subset: Path, real_llm: OpenAICompatibleLLM
) -> None:
    """bm25 + reader, single_shot and a tightly budgeted agent, one question each, through the real 0.5B model."""
    settings = settings.model_copy(
        update={"agent": settings.agent.model_copy(update={"max_llm_calls": 6, "max_steps": 12})}
    )
    assert isinstance(settings.agent, AgentConfig)
    ds = load_dataset(hotpot_subset)
    out = tmp_path / "out"
    config = EvalConfig(["bm25", "single_shot", "agent"], limit=1)
    result = await run_eval(settings, ds, config, out, llm=real_llm)
    summary = json.loads((out / "summary.json").read_text())
    assert summary == result.summary
    for name in ("bm25", "single_shot", "agent"):
        s = summary["strategies"][name]
        assert s["n"] == 1 and s["errors"] == 0, name
        assert s["llm_calls_mean"] >= 1 and s["prompt_tokens_mean"] > 0, name
        assert s["f1"] is not None and 0.0 <= s["f1"] <= 1.0
        assert s["cached_share"] is not None
    agent = result.records["agent"][0]
    assert agent.run_id and agent.trajectory.steps >= 1
    traces = TraceStore.open(settings.path("runs.sqlite"))
    assert traces.get_run(agent.run_id, tenant=settings.default_tenant) is not None  # the viewer can open it
    traces.close()
    assert agent.llm_calls <= 6  # the budget holds
    single = result.records["single_shot"][0]
    assert single.trajectory.tool_calls == ["vector_search"]
    assert single.scores.recall_5 > 0
