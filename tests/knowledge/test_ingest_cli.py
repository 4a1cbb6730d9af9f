"""``waypoint ingest`` and ``waypoint search`` end to end (real model, real local Qdrant)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from knowledge.embeddings import Embedder


def test_ingest_then_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder, corpus_path: Path
) -> None:
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("WAYPOINT_QDRANT_URL", raising=False)
    monkeypatch.setattr("knowledge.embeddings.local.LocalEmbedder", lambda batch_size, **_: embedder)  # loaded once
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "owls.md").write_text("# Owls\n\nBarn owls swallow voles whole.\n", encoding="utf-8")
    (docs / "bad.txt").write_bytes(b"\x00\x01binary")
    runner = CliRunner()

    result = runner.invoke(app, ["ingest", "--corpus", str(corpus_path), "--tenant", "cli"])
    assert result.exit_code == 0, result.output
    assert "24" in result.output
    assert "time by stage: " in result.output and "embed" in result.output  # where the seconds went

    result = runner.invoke(app, ["ingest", str(docs), "--tenant", "cli"])
    assert result.exit_code == 0, result.output
    assert "bad.txt" in result.output and "binary" in result.output

    result = runner.invoke(app, ["search", "XK-4471", "--tenant", "cli", "--mode", "sparse", "--k", "2"])
    assert result.exit_code == 0, result.output
    assert "1. Part XK-4471" in result.output and "p06" in result.output

    result = runner.invoke(app, ["search", "voles", "--tenant", "cli", "--mode", "fuzzy"])
    assert result.exit_code == 2 and "unknown mode" in result.output
