"""``scripts/by_type_table.py``: the agent's first tool is checked against the tools that found gold alone."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

from evals_support import load_script


def _script() -> ModuleType:
    return load_script("by_type_table")


def _record(strategy: str, qid: str, scores: dict[str, Any], tools: list[str] | None = None) -> str:
    row = {"strategy": strategy, "question_id": qid, "type": "section", "scores": scores}
    if tools is not None:
        row["trajectory"] = {"tool_calls": tools}
    return json.dumps(row) + "\n"


def test_oracle_counts_only_questions_some_tool_missed(tmp_path: Path) -> None:
    agent, tools = tmp_path / "agent", tmp_path / "tools"
    for folder in (agent, tools):
        (folder / "records").mkdir(parents=True)
    (agent / "records" / "agent.jsonl").write_text(
        _record("agent", "q1", {"f1": 1.0}, ["tree_search", "vector_search"])
        + _record("agent", "q2", {"f1": 0.0}, ["graph_search"])
        + _record("agent", "q3", {"f1": 0.0}, ["vector_search"])
    )
    (tools / "records" / "hybrid.jsonl").write_text(
        _record("hybrid", "q1", {"section_recall": 0.0, "f1": 0.0})
        + _record("hybrid", "q2", {"section_recall": 1.0, "f1": 1.0})
        + _record("hybrid", "q3", {"section_recall": 1.0, "f1": 0.0})
    )
    (tools / "records" / "tree.jsonl").write_text(
        _record("tree", "q1", {"section_recall": 1.0, "f1": 1.0})
        + _record("tree", "q2", {"section_recall": 0.0, "f1": 0.0})
        + _record("tree", "q3", {"section_recall": 1.0, "f1": 0.0})
    )
    text = _script().oracle([agent, tools])
    assert "| q1 | section | tree_search | tree_search | tree_search | 1.00 |" in text
    assert "| q2 | section | graph_search | vector_search | vector_search | 0.00 |" in text
    assert "(2 questions), the agent's first tool was one of them in 1." in text  # q3: both tools found it
