"""The ``llama-server`` child backend (``local.server_bin``): arguments, failures, death with its parent, and the
real native build when one is present (``make llama-native``; with ``CI`` set, ``make test`` builds it first)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.llm import CallOptions, LLMUnavailableError, ModelFileError, OpenAICompatibleLLM
from agents.llm.factory import local_backend, start_llm
from agents.llm.llama_server import LlamaServerProcess, server_args
from knowledge.settings import LLMConfig, LocalLLMConfig, Settings

REPO = Path(__file__).resolve().parents[2]
MODELS_DIR = REPO / ".waypoint" / "models"
TEST_MODEL = "qwen2.5-0.5b"
NATIVE = Path(os.environ.get("WAYPOINT_TEST_LLAMA_SERVER_BIN", REPO / ".waypoint/llama-native/bin/llama-server"))


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _gguf(tmp_path: Path) -> Path:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 64)
    return model


def test_arguments_carry_the_embedded_settings_and_bind_loopback(tmp_path: Path) -> None:
    args = server_args(Path("/opt/llama-server"), tmp_path / "m.gguf", port=4321, threads=2, n_ctx=8192, n_parallel=3)
    flags = dict(zip(args[1::2], args[2::2], strict=False))
    assert args[0] == "/opt/llama-server"
    assert flags["--model"] == str(tmp_path / "m.gguf")
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == "4321"
    assert (flags["--ctx-size"], flags["--parallel"], flags["--threads"]) == ("8192", "3", "2")
    assert "--metrics" in args and "--no-webui" in args


def test_a_missing_binary_says_how_to_build_one(tmp_path: Path) -> None:
    server = LlamaServerProcess(tmp_path / "nope", "x.gguf", tmp_path, log_path=tmp_path / "log")
    with pytest.raises(LLMUnavailableError, match="make llama-native"):
        server.start()


def test_a_binary_that_cannot_load_the_model_is_a_model_error_with_its_log(tmp_path: Path) -> None:
    binary = _script(tmp_path / "llama-server", 'echo "llama_model_load: error: failed to load model $2"\nexit 1\n')
    server = LlamaServerProcess(binary, str(_gguf(tmp_path)), tmp_path, log_path=tmp_path / "logs" / "s.log")
    with pytest.raises(ModelFileError, match="failed to load model"):
        server.start(ready_timeout_s=10)
    assert server.base_url is None and server.pid is None


def test_a_server_that_never_gets_healthy_is_stopped_after_the_timeout(tmp_path: Path) -> None:
    binary = _script(tmp_path / "llama-server", "exec sleep 60\n")
    server = LlamaServerProcess(binary, str(_gguf(tmp_path)), tmp_path, log_path=tmp_path / "s.log")
    with pytest.raises(LLMUnavailableError, match="not healthy"):
        server.start(ready_timeout_s=1)
    assert server.pid is None


def test_the_factory_picks_the_child_when_a_binary_is_set(tmp_path: Path) -> None:
    binary = _script(tmp_path / "llama-server", "echo boom\nexit 7\n")
    local = LocalLLMConfig(model=str(_gguf(tmp_path)), server_bin=binary)
    settings = Settings(data_dir=tmp_path / "data", local=local)
    assert local_backend(settings) == "llama.cpp-server"
    assert local_backend(Settings(data_dir=tmp_path)) == "llama.cpp-embedded"
    assert local_backend(Settings(data_dir=tmp_path, llm=LLMConfig(base_url="http://x/v1"))) == "openai-compatible"
    with pytest.raises(LLMUnavailableError, match="status 7"):
        start_llm(settings)
    assert "boom" in (tmp_path / "data" / "logs" / "llama-server.log").read_text()


def test_the_child_dies_when_its_parent_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    binary = _script(tmp_path / "llama-server", f'echo $$ > "{pidfile}"\nexec sleep 120\n')
    code = (
        "import sys; from pathlib import Path; from agents.llm.llama_server import LlamaServerProcess\n"
        f"LlamaServerProcess(Path({str(binary)!r}), {str(_gguf(tmp_path))!r}, Path({str(tmp_path)!r}),"
        f" log_path=Path({str(tmp_path / 's.log')!r})).start(ready_timeout_s=120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    os.kill(child, 0)  # alive while the parent is
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while True:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "the llama-server child outlived its killed parent"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(not NATIVE.is_file(), reason=f"no native llama-server at {NATIVE} (build: make llama-native)")
async def test_the_native_build_serves_completions_and_reuses_prefixes(tmp_path: Path) -> None:
    server = LlamaServerProcess(NATIVE, TEST_MODEL, MODELS_DIR, log_path=tmp_path / "s.log", n_ctx=8192)
    base_url = server.start()
    llm = OpenAICompatibleLLM(base_url, model=TEST_MODEL, timeout_s=300)
    try:
        passages = "\n".join(f"[E{i}] The river Alder{i} flows through Brenn{i}." for i in range(1, 60))
        messages = [
            {"role": "system", "content": "Answer from the evidence only.\n" + passages},
            {"role": "user", "content": "Which town does the river Alder7 flow through? One word."},
        ]
        first = await llm.complete(messages, options=CallOptions(max_tokens=8))
        again = [messages[0], {"role": "user", "content": "Which town does Alder9 flow through? One word."}]
        second = await llm.complete(again, options=CallOptions(max_tokens=8))
        assert "brenn7" in first.text.lower()
        assert first.usage.prompt_tokens > 500
        assert second.usage.cached_tokens >= 0.8 * second.usage.prompt_tokens
        assert await llm.tokenize(messages) is not None  # llama.cpp's /tokenize: the radix accounting works
    finally:
        await llm.aclose()
        server.stop()
    assert server.pid is None
