"""deploy/compose.yaml parses, names every tier, and its Waypoint environment means what it says to Settings.

The stack itself cannot run here (no Docker, no GPU); this keeps the file honest: YAML syntax, the
required services, files it mounts exist, and each WAYPOINT_* / OTEL_* variable lands in the setting it
is meant for (a misspelt variable would be silently ignored by the service).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowledge.settings import OTelConfig, Settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
REQUIRED = {"sglang", "qdrant", "neo4j", "postgres", "api", "worker", "otel-collector", "lb"}
_VAR = re.compile(r"\$\{(\w+)(?::?[-?]([^}]*))?\}")


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def _interpolate(value: str) -> str:
    """Compose's ${VAR:-default} / ${VAR:?message}, with every variable unset: the default, else 'secret'."""
    return _VAR.sub(lambda m: m.group(2) if m.group(0).count(":-") else "secret", value)


def test_compose_has_every_tier_and_scales_api_and_workers() -> None:
    services = _compose()["services"]
    assert set(services) >= REQUIRED
    assert services["api"]["deploy"]["replicas"] and services["worker"]["deploy"]["replicas"]
    assert services["api"]["command"][:2] == ["waypoint", "serve"]
    assert services["worker"]["command"][:2] == ["waypoint", "worker"]
    sglang = services["sglang"]["command"]
    for flag in ("sglang_router.launch_server", "--dp-size", "--router-policy", "--enable-metrics"):
        assert flag in sglang
    assert sglang[sglang.index("--router-policy") + 1] == "cache_aware"


def test_mounted_files_exist_and_parse() -> None:
    services = _compose()["services"]
    for name in ("lb", "otel-collector"):
        for volume in services[name]["volumes"]:
            assert (DEPLOY / volume.split(":")[0]).is_file(), volume
    otel = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    assert otel["service"]["pipelines"]["traces"]["receivers"] == ["otlp"]
    assert (DEPLOY / "Dockerfile").is_file()


def test_waypoint_environment_reaches_the_intended_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    services = _compose()["services"]
    api_env = {k: _interpolate(str(v)) for k, v in services["api"]["environment"].items()}
    worker_env = {k: _interpolate(str(v)) for k, v in services["worker"]["environment"].items()}
    assert {k: v for k, v in api_env.items() if k != "WAYPOINT_API_API_KEYS_FILE"} == worker_env
    for key, value in api_env.items():
        monkeypatch.setenv(key, value)
    s = Settings()
    assert s.postgres_url == "postgresql://waypoint:secret@postgres:5432/waypoint"
    assert s.ingest.queue == "postgres"
    assert s.qdrant.url == "http://qdrant:6333" and s.qdrant.layout == "payload"
    assert s.neo4j.uri == "neo4j://neo4j:7687" and s.neo4j.password is not None
    assert s.llm.base_url == "http://sglang:30000/v1" and s.llm.metrics_urls == ["http://sglang:30000/engine_metrics"]
    assert s.api.api_keys_file == Path("/etc/waypoint/api_keys.json")
    assert str(s.data_dir) == "/data"
    assert OTelConfig().exporter_otlp_endpoint == "http://otel-collector:4318"
