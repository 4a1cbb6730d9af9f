"""``scripts/first_search_changed.py``: one setting changed by ``--set``, and the subset dataset it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evals_support import load_script

from knowledge.settings import Settings


def test_a_set_changes_one_field_and_refuses_an_unknown_one() -> None:
    script = load_script("first_search_changed")
    base = Settings()
    other = script.with_setting(base, "agent.fusion_heads=0")
    assert other.agent.fusion_heads == 0 and base.agent.fusion_heads == 1  # the default is left as it was
    assert other.agent.top_k == base.agent.top_k
    assert script.with_setting(base, "agent.routing=fused").agent.routing == "fused"  # not JSON: kept as text
    with pytest.raises(SystemExit, match="no field 'fusion_head'"):
        script.with_setting(base, "agent.fusion_head=0")


def test_the_subset_keeps_only_the_named_questions_and_the_same_knowledge_base(tmp_path: Path) -> None:
    script = load_script("first_search_changed")
    src = tmp_path / "src"
    (src / "docs").mkdir(parents=True)
    (src / "docs" / "manual.md").write_text("# Manual\n\nText.\n")
    (src / "dev_corpus.jsonl").write_text(json.dumps({"id": "p1", "title": "T", "text": "x"}) + "\n")
    rows = [{"id": f"q{i}", "question": f"Q{i}?", "answers": ["a"]} for i in range(3)]
    (src / "dev_questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    script.subset(src, tmp_path / "linked", {"q0", "q2"}, copy=False)
    kept = [json.loads(ln)["id"] for ln in (tmp_path / "linked" / "dev_questions.jsonl").read_text().splitlines()]
    assert kept == ["q0", "q2"]
    assert (tmp_path / "linked" / "docs").is_symlink() and (tmp_path / "linked" / "dev_corpus.jsonl").is_symlink()
    script.subset(src, tmp_path / "copied", {"q1"}, copy=True)  # a temporary source: its files are copied
    assert not (tmp_path / "copied" / "docs").is_symlink()
    assert (tmp_path / "copied" / "docs" / "manual.md").read_text() == "# Manual\n\nText.\n"
