"""``waypoint graph build|stats|query`` against the embedded FalkorDB in a temp data dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graph_helpers import BRIDGE_CORPUS
from typer.testing import CliRunner

from cli import app

pytestmark = pytest.mark.integration  # real embedding model, Qdrant and FalkorDB (or a child process)


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"id": c.id, "title": c.title, "text": c.text}) for c in BRIDGE_CORPUS]
    path.write_text("\n".join([*lines, "{broken"]) + "\n")
    return path


def test_build_stats_query(corpus: Path) -> None:
    runner = CliRunner()
    built = runner.invoke(app, ["graph", "build", str(corpus), "--tenant", "cli"])
    assert built.exit_code == 0, built.output
    assert "6 passages" in built.output and "skipped" in built.output
    assert "passages/s" in built.output and "entities" in built.output  # the final summary table
    stats = runner.invoke(app, ["graph", "stats", "--tenant", "cli"])
    assert stats.exit_code == 0 and "falkordb" in stats.output
    assert "6 " in stats.output or "│ 6" in stats.output
    found = runner.invoke(app, ["graph", "query", "Who directed The Gravy Train?", "--tenant", "cli", "-k", "2"])
    assert found.exit_code == 0, found.output
    assert "1. The Gravy Train" in found.output and "Jack Starrett" in found.output
    path = runner.invoke(app, ["graph", "query", "The Gravy Train", "--path-to", "Van Nuys", "--tenant", "cli"])
    assert "graph path" in path.output


def test_bad_input_is_reported(corpus: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["graph", "build", str(corpus), "--extractor", "magic"])
    assert bad.exit_code != 0 and "fast" in bad.output
    tenant = runner.invoke(app, ["graph", "stats", "--tenant", "../etc"])
    assert tenant.exit_code == 1 and "tenant id" in tenant.output
