"""Lexical hints given to the navigator, and the ``waypoint tree`` commands (build, show, errors)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from tree_support import MANUAL
from typer.testing import CliRunner

from cli import app
from knowledge.settings import TreeConfig
from knowledge.trees import Choice, NodeView, TreeStore
from knowledge.trees.lexical import content_words, matched_words
from tools.tree_search import TreeSearchTool


class Recorder:
    """A navigator that records what it is shown and picks nothing."""

    def __init__(self) -> None:
        self.hints: list[str] = []

    async def choose(
        self,
        question: str,
        level: Sequence[NodeView],
        beam: int,
        *,
        heading: str = "",
        note: str = "",
        hints: str = "",
        outline: bool = False,
    ) -> list[Choice]:
        self.hints.append(hints)
        return []


def test_matched_words_use_crude_stems() -> None:
    assert matched_words("Which seals drip when cleaning?", "Replace the seal when it drips. Cleaning...") == [
        "seals",
        "drip",
        "cleaning",
    ]
    assert "the" not in content_words("the pump")


async def test_hints_name_the_entries_holding_question_words(manual_store: TreeStore) -> None:
    nav = Recorder()
    await TreeSearchTool(manual_store, nav, "t", TreeConfig(mode="beam")).search(
        "frost damage warranty seal", filters={"doc_id": "manual"}
    )
    assert nav.hints == ["[1.3] frost, damage, warranty; [1.2] seal"]
    nav = Recorder()
    await TreeSearchTool(manual_store, nav, "t", TreeConfig(mode="beam", lexical_hints=False)).search(
        "frost", filters={"doc_id": "manual"}
    )
    assert nav.hints == [""]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def flat(text: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(text.split())


def test_cli_build_and_show(data_dir: Path) -> None:
    (data_dir / "manual.md").write_text(MANUAL)
    corpus = data_dir / "c.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": "Ada", "text": "Ada wrote code."}) + "\n{bad json\n")
    runner = CliRunner()
    built = runner.invoke(app, ["tree", "build", str(data_dir / "manual.md"), str(corpus)])
    assert built.exit_code == 0, built.output
    assert "2 document trees stored" in flat(built.output) and "1 inputs failed" in flat(built.output)
    shown = runner.invoke(app, ["tree", "show", "Pump manual", "--summaries"])
    assert shown.exit_code == 0, shown.output
    assert "1.2.2 Replacing the seal" in flat(shown.output) and "Order seal kit SK-442" in flat(shown.output)
    shallow = runner.invoke(app, ["tree", "show", "Pump manual", "--depth", "2"])
    assert "1.2 2 Maintenance" in shallow.output and "Replacing the seal" not in shallow.output
    missing = runner.invoke(app, ["tree", "show", "nothing"])
    assert missing.exit_code == 1 and "no document tree for 'nothing'" in flat(missing.output)


def test_cli_search_help_lists_the_doc_option() -> None:
    result = CliRunner().invoke(app, ["tree", "search", "--help"])
    assert result.exit_code == 0 and "--doc" in result.output


def test_cli_summarize_shows_progress_and_a_summary_table(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import dataclass

    import agents.llm.factory
    from agents.llm.scripted import ScriptedLLM

    @dataclass
    class Runtime:
        llm: ScriptedLLM
        backend: str = "scripted"
        model: str = "stub"

        async def aclose(self) -> None:
            return None

    llm = ScriptedLLM([lambda messages, options: "not json"] * 64)  # unusable replies: summaries stay extractive
    monkeypatch.setattr(agents.llm.factory, "start_llm", lambda settings: Runtime(llm))
    (data_dir / "manual.md").write_text(MANUAL)
    runner = CliRunner()
    assert runner.invoke(app, ["tree", "build", str(data_dir / "manual.md")]).exit_code == 0
    done = runner.invoke(app, ["tree", "summarize"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    out = flat(done.output)
    assert "node summaries" in out and "kept extractive" in out and "LLM calls" in out  # the summary table
    assert "1 documents:" in out and len(llm.calls) > 0
