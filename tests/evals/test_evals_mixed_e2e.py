"""End to end on a tiny mixed folder (two documents + passages): real ingestion (MiniLM, Qdrant local, trees),
BM25, hybrid vector search and the single-shot graph, answers from the scripted LLM; then provenance rules."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_evals_mixed import QUESTIONS, write_mixed

from agents.llm import CallOptions, Message
from agents.llm.scripted import ScriptedLLM
from evals.datasets import load_dataset
from evals.errors import EvalError
from evals.runner import EvalConfig, run_eval, write_summary
from evals.store import read_meta
from knowledge.settings import Settings

REPLIES = {"sec": "7311 [{label}1]", "two": "yes [{label}1]", "mh": "mustard [{label}1]", "abs": "NOT FOUND"}
"""Question id -> reply; the label is the first passage (reader) or evidence item (single shot)."""


def _reply(messages: Sequence[Message], options: CallOptions) -> str:
    text = " ".join(m["content"] for m in messages)
    label = "P" if "[P1]" in text else "E"
    for q in QUESTIONS:
        if q["question"] in text:
            return REPLIES[q["id"]].format(label=label)
    raise AssertionError(f"no scripted reply for {text[-200:]!r}")


async def test_mixed_folder_end_to_end_with_the_scripted_llm(settings: Settings, tmp_path: Path) -> None:
    ds = load_dataset(write_mixed(tmp_path / "mixed"))
    llm = ScriptedLLM([_reply] * 16)
    out = tmp_path / "out"
    strategies = ["bm25", "hybrid", "single_shot", "single_shot_fused"]
    result = await run_eval(settings, ds, EvalConfig(strategies), out, llm=llm)
    assert llm.remaining == 0  # one answer call per question and strategy
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema_version"] == 2
    for name, tool in (("bm25", "bm25"), ("hybrid", "vector_search"), ("single_shot", "vector_search")):
        s = summary["strategies"][name]
        assert s["n"] == 4 and s["errors"] == 0, name
        assert set(s["by_type"]) == {"section", "two_docs", "multihop", "absent"}, name
        assert s["by_type"]["absent"]["em"] == 1.0 and s["by_type"]["absent"]["recall@5"] is None, name
        assert s["not_found"] == {"precision": 1.0, "recall": 1.0}, name
        assert s["tools"] == {tool: {"calls_mean": 1.0}}, name
        assert s["by_type"]["multihop"]["section_recall"] is None, name  # passages have no sections
    records = {r.question_id: r for r in result.records["bm25"]}
    assert records["sec"].scores.section_recall == 1.0  # BM25 over the chunks finds the Ports section
    assert records["sec"].gold_sections == [("guide.md", ["Widget Guide", "Configuration", "Ports"])]
    assert records["abs"].expects_not_found and records["abs"].said_not_found
    single = {r.question_id: r for r in result.records["single_shot"]}
    assert single["sec"].scores.section_recall is not None and single["sec"].scores.em == 1.0
    assert single["abs"].said_not_found is True
    assert summary["strategies"]["single_shot"]["section_recall"] is not None
    # the fused baseline searches as the agent's first search: vector and graph, the vector search alone only
    # where its best hit lies in a section of a document longer than a result list (agent.sections_by_vector):
    # the guide here is a few passages, so its section question is fused too; one answer call
    fused = summary["strategies"]["single_shot_fused"]
    assert fused["errors"] == 0 and fused["llm_calls_mean"] == 1.0
    ran = {r.question_id: r.trajectory.tool_calls for r in result.records["single_shot_fused"]}
    assert sorted(ran["sec"]) == sorted(ran["mh"]) == ["graph_search", "vector_search"]
    n_graph = sum("graph_search" in calls for calls in ran.values())
    assert fused["tools"] == {"graph_search": {"calls_mean": n_graph / 4}, "vector_search": {"calls_mean": 1.0}}
    assert {r.question_id: r.scores.em for r in result.records["single_shot_fused"]}["abs"] == 1.0
    assert fused["citation_precision"] is not None and fused["citation_recall"] is not None
    # run.json says where the numbers came from
    prov = read_meta(out)["provenance"]
    assert prov["backend"] == "passed-in" and prov["model"] == "scripted" and prov["model_sha256"] is None
    assert prov["config"]["ingest"]["chunk_tokens"] == settings.ingest.chunk_tokens
    assert {"cores", "load", "cpu"} <= set(prov["machine"])
    assert len(prov["id"]) == 12 and all(r.provenance == prov["id"] for r in result.records["bm25"])
    assert summary["provenance"]["id"] == prov["id"] and summary["provenance_ids"] == [prov["id"]]

    # resuming the folder under another config is refused, naming what changed; allowed when asked
    other = settings.model_copy(update={"agent": settings.agent.model_copy(update={"max_steps": 3})})
    config = EvalConfig(["bm25"], retrieval_only=False)
    with pytest.raises(EvalError, match=r"different provenances.*config"):
        await run_eval(other, ds, config, out, llm=ScriptedLLM([_reply] * 4))
    bm25_lines = (out / "records" / "bm25.jsonl").read_text()
    other_lines = bm25_lines.replace(prov["id"], "0123456789ab", 1)  # one record as if from another run
    (out / "records" / "bm25.jsonl").write_text(other_lines)
    with pytest.raises(EvalError, match="--allow-mixed-provenance"):
        write_summary(out, ds, read_meta(out))
    mixed, _ = write_summary(out, ds, read_meta(out), allow_mixed_provenance=True)
    assert mixed["provenance_ids"] == sorted([prov["id"], "0123456789ab"])
