"""``scripts/trace_decisions.py``: routes and corrections read from the traces, judged against each tool alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals_support import load_script

from graphs.events import Corrected, Envelope, Routed
from graphs.tracing.store import TraceStore

FUSED = ["vector_search", "graph_search"]


def _rec(strategy: str, qid: str, scores: dict[str, Any], run_id: str = "", first_call: int | None = None) -> str:
    row = {"strategy": strategy, "question_id": qid, "type": "t", "run_id": run_id, "scores": scores}
    row["trajectory"] = {"gold_first_call": first_call}
    return json.dumps(row) + "\n"


def test_oracle_and_loop_tallies_come_from_the_traced_routes_and_corrections(tmp_path: Path) -> None:
    agent = tmp_path / "agent.jsonl"
    agent.write_text(
        # q1: a document question; the first search (vector only) found the section that only hybrid found alone
        _rec("agent", "q1", {"section_recall": 1.0, "f1": 1.0}, "r1")
        # q2: a passage question; the fused search missed a gold passage, a hop recovered it (tool call 3)
        + _rec("agent", "q2", {"section_recall": None, "recall@5": 1.0, "f1": 0.0}, "r2", first_call=3)
        # q3: tree alone found the section; the agent searched with vector, then switched to tree, and got it wrong
        + _rec("agent", "q3", {"section_recall": 1.0, "f1": 0.0}, "r3")
    )
    hybrid, tree = tmp_path / "hybrid.jsonl", tmp_path / "tree.jsonl"
    hybrid.write_text(
        _rec("hybrid", "q1", {"section_recall": 1.0})
        + _rec("hybrid", "q2", {"section_recall": None, "recall@5": 0.5})
        + _rec("hybrid", "q3", {"section_recall": 0.0})
    )
    tree.write_text(
        _rec("tree", "q1", {"section_recall": 0.0})
        + _rec("tree", "q2", {"section_recall": None, "recall@5": 0.5})
        + _rec("tree", "q3", {"section_recall": 1.0})
    )
    store = TraceStore.open(tmp_path / "runs.sqlite")
    routes = {
        "r1": [  # the fused first search, narrowed to the vector index (a section lookup)
            Routed(subq_index=0, subq="s", tools=FUSED, query="s", source="first_pass"),
            Routed(subq_index=0, subq="s", tools=["vector_search"], query="s", source="section"),
        ],
        "r2": [
            Routed(subq_index=0, subq="s", tools=FUSED, query="s", source="first_pass"),
            Corrected(subq_index=0, action="hop", reason="describes an entity", tools=FUSED),
            Routed(subq_index=0, subq="s", tools=FUSED, query="s2", source="correction", attempt=2),
        ],
        "r3": [
            Routed(subq_index=0, subq="s", tools=["vector_search"], query="s", source="first_pass"),
            Corrected(subq_index=0, action="switch", reason="no evidence kept", tools=["tree_search"]),
            Routed(subq_index=0, subq="s", tools=["tree_search"], query="s", source="correction", attempt=2),
        ],
    }
    for run_id, events in routes.items():
        store.start_run(run_id=run_id, tenant="default", question="q", started_at=1.0)
        for seq, ev in enumerate(events):
            store.append(Envelope(run_id=run_id, seq=seq, ts=2.0, event=ev))
    store.close()
    script = load_script("trace_decisions")
    records = {p.stem: script._records(p) for p in (agent, hybrid, tree)}
    alone = {"hybrid": records["hybrid"], "tree": records["tree"]}
    traced = script.decisions(str(tmp_path / "runs.sqlite"), "default", {"q1": "r1", "q2": "r2", "q3": "r3"})
    result = script.report(records["agent"], traced, alone)
    assert result["oracle"] == {"judged": 2, "first_search_agrees": 1, "any_search_agrees": 2}
    loop = result["loop"]
    assert (loop["runs"], loop["fired"], loop["by_action"]) == (3, 2, {"hop": 1, "switch": 1})
    assert (loop["gold_at_end"], loop["right_answer"]) == (2, 0)
    assert (loop["first_search_missed"], loop["recovered_gold"]) == (1, 1)
    assert result["questions"][0]["first_search"] == ["vector_search"] and not result["questions"][0]["later_searches"]
    q3 = result["questions"][2]
    assert q3["first_search"] == ["vector_search"] and q3["later_searches"][0]["source"] == "correction"
    assert "| q3 | t | vector_search | correction: tree_search | switch | tree_search | yes | 0.00 |" in (
        script.markdown(result)
    )
