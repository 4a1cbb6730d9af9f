"""A ``llama-server`` binary run as a child process: the opt-in native build (``make llama-native``).

The xllamacpp wheel's kernels are built for AVX2 only; a ``llama-server`` compiled with ``GGML_NATIVE=ON``
uses the CPU's AVX-512 / VNNI / AMX (1.38x prefill, 1.20x decode on this project's 2-core EPYC:
``docs/bench/llm_isa.md``). It speaks the same OpenAI-compatible API with the same prefix cache, so the
client (``OpenAICompatibleLLM``) does not change; only who owns the server does. The child gets the wheel's
settings (context, slots, threads, prompt cache), binds loopback only, and dies with its parent
(``PR_SET_PDEATHSIG``), so a ``kill -9`` of Waypoint leaves no server holding the model. Linux sends that signal
when the *thread* that spawned the child ends: ``start()`` runs on the main thread or on an asyncio default-executor
thread (``graphs.services``), which lives as long as the event loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from agents.llm.errors import LLMUnavailableError, ModelFileError
from agents.llm.model_files import resolve_model_file

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def binary_problem(binary: Path) -> str:
    """Why ``binary`` cannot be run as the ``llama-server`` child, or ``""``."""
    path = binary.expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        return f"llama-server binary {str(path)!r} is missing or not executable"
    return ""


def free_port() -> int:
    """A loopback port nothing listens on now (the child binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_args(
    binary: Path,
    model_path: Path,
    *,
    port: int,
    threads: int,
    n_ctx: int,
    n_parallel: int,
    cache_reuse: int = 0,
) -> list[str]:
    """The command line: the embedded backend's settings, spelled as ``llama-server`` flags."""
    return [
        str(binary),
        "--model",
        str(model_path),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--ctx-size",
        str(n_ctx),
        "--parallel",
        str(n_parallel),
        "--threads",
        str(threads),
        "--threads-batch",
        str(threads),
        "--cache-reuse",
        str(cache_reuse),
        "--metrics",
        "--no-webui",
        "--jinja",
    ]


class LlamaServerProcess:
    """Owns one ``llama-server`` child; ``start()`` returns its ``/v1`` base URL, ``stop()`` ends it.

    Same surface as ``EmbeddedLlamaServer`` (``start``, ``stop``, ``model_path``, ``load_s``), so the
    factory and the CLI treat both alike.
    """

    def __init__(
        self,
        binary: Path,
        model: str,
        models_dir: Path,
        *,
        log_path: Path,
        threads: int = 0,
        n_ctx: int = 16384,
        n_parallel: int = 2,
        cache_reuse: int = 0,
    ) -> None:
        self._binary = binary
        self._model = model
        self._models_dir = models_dir
        self._log_path = log_path
        self._threads = threads or (os.cpu_count() or 2)
        self._n_ctx = n_ctx
        self._n_parallel = n_parallel
        self._cache_reuse = cache_reuse
        self._proc: subprocess.Popen[bytes] | None = None
        self.model_path: Path | None = None
        self.base_url: str | None = None
        self.load_s: float | None = None
        """Seconds from spawn until ``/health`` answered 200 (the model loaded)."""

    def start(self, ready_timeout_s: float = 180.0) -> str:
        """Resolve the model file, spawn the binary on a free loopback port, wait until it is healthy."""
        if self.base_url is not None:
            return self.base_url
        binary = self._binary.expanduser()
        if problem := binary_problem(binary):
            raise LLMUnavailableError(
                f"{problem}: build it with `make llama-native`, or unset WAYPOINT_LOCAL_SERVER_BIN to use the wheel"
            )
        path = resolve_model_file(self._model, self._models_dir)
        port = free_port()
        args = server_args(
            binary,
            path,
            port=port,
            threads=self._threads,
            n_ctx=self._n_ctx,
            n_parallel=self._n_parallel,
            cache_reuse=self._cache_reuse,
        )
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        with self._log_path.open("ab") as log:
            self._proc = subprocess.Popen(  # a binary the operator configured, no shell
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
            )
        root = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + ready_timeout_s
        while True:
            code = self._proc.poll()
            if code is not None:
                self._proc = None
                what = f"exited with status {code} before it was healthy"
                if code == -signal.SIGSEGV:  # the -march=native build's AMX kernels do this (llama.cpp #20824)
                    what += " (SIGSEGV while loading; on an AMX CPU, rebuild without AMX: make llama-native)"
                raise self._failure(what, path)
            try:
                if httpx.get(f"{root}/health", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise LLMUnavailableError(f"llama-server at {root} not healthy after {ready_timeout_s}s")
            time.sleep(0.1)
        self.load_s = time.perf_counter() - started
        self.model_path = path
        self.base_url = f"{root}/v1"
        return self.base_url

    def _failure(self, what: str, path: Path) -> Exception:
        tail = ""
        with contextlib.suppress(OSError):
            tail = self._log_path.read_text("utf-8", "replace")[-1500:]
        msg = f"llama-server {str(self._binary)!r} {what} (model {str(path)!r}); log {self._log_path}:\n{tail}"
        return ModelFileError(msg) if "failed to load model" in tail else LLMUnavailableError(msg)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM the child, SIGKILL it after ``grace_s`` (idempotent)."""
        proc, self._proc = self._proc, None
        self.base_url = None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=grace_s)

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def __enter__(self) -> LlamaServerProcess:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
