"""Settings: env prefix, one underscore between section and field, nothing read at import."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.settings import Settings


def test_env_maps_to_nested_sections(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WAYPOINT_LLM_BASE_URL", "http://127.0.0.1:30000/v1")
    monkeypatch.setenv("WAYPOINT_LOCAL_MODEL", "qwen2.5-0.5b")
    monkeypatch.setenv("WAYPOINT_QDRANT_URL", "http://127.0.0.1:6333")
    monkeypatch.setenv("WAYPOINT_NEO4J_URI", "neo4j://127.0.0.1:7687")
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("WAYPOINT_AGENT_MAX_LLM_CALLS", "7")
    s = Settings()
    assert s.llm.base_url == "http://127.0.0.1:30000/v1"
    assert s.local.model == "qwen2.5-0.5b"
    assert s.qdrant.url == "http://127.0.0.1:6333"
    assert s.neo4j.uri == "neo4j://127.0.0.1:7687"
    assert s.data_dir == tmp_path
    assert s.agent.max_llm_calls == 7


def test_defaults_are_the_embedded_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("WAYPOINT_LLM_BASE_URL", "WAYPOINT_QDRANT_URL", "WAYPOINT_NEO4J_URI", "WAYPOINT_LOCAL_MODEL"):
        monkeypatch.delenv(key, raising=False)
    s = Settings()
    assert s.llm.base_url is None and s.qdrant.url is None and s.neo4j.uri is None
    assert s.local.model == "qwen2.5-1.5b"
    assert s.data_dir == Path(".waypoint")


def test_bad_values_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAYPOINT_AGENT_MAX_STEPS", "lots")
    with pytest.raises(ValueError, match="max_steps"):
        Settings()
    monkeypatch.delenv("WAYPOINT_AGENT_MAX_STEPS")
    monkeypatch.setenv("WAYPOINT_AGENT_FUSION_HEADS", "-1")  # would keep all but the last of every list
    with pytest.raises(ValueError, match="fusion_heads"):
        Settings()
