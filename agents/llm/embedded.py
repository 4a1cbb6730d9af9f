"""The embedded llama.cpp server (xllamacpp wheel), started in-process on loopback.

It speaks the same OpenAI-compatible API as SGLang, reuses the KV cache of the longest common
prompt prefix per slot, and reports it as ``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from agents.llm.errors import LLMUnavailableError, ModelFileError
from agents.llm.model_files import resolve_model_file


class EmbeddedLlamaServer:
    """Owns one xllamacpp ``Server``; ``start()`` returns its ``/v1`` base URL, ``stop()`` frees it."""

    def __init__(
        self,
        model: str,
        models_dir: Path,
        *,
        threads: int = 0,
        n_ctx: int = 16384,
        n_parallel: int = 2,
        cache_reuse: int = 0,
        slot_similarity: float | None = None,
        cache_ram_mib: int | None = None,
    ) -> None:
        self._model = model
        self._models_dir = models_dir
        self._threads = threads or (os.cpu_count() or 2)
        self._n_ctx = n_ctx
        self._n_parallel = n_parallel
        self._cache_reuse = cache_reuse
        """llama.cpp ``n_cache_reuse``: reuse cached chunks of at least this many tokens past the common prefix
        by shifting their KV (0: prefix only)."""
        self._slot_similarity = slot_similarity
        """llama.cpp ``slot_prompt_similarity``: the share of a prompt a slot's cache must match for the slot to be
        chosen for it (None: llama.cpp's default)."""
        self._cache_ram_mib = cache_ram_mib
        """llama.cpp ``cache_ram_mib``: host-RAM cache of evicted slot prompts (None: default; 0: off)."""
        self._server: Any = None
        self.model_path: Path | None = None
        self.base_url: str | None = None
        self.load_s: float | None = None
        """Seconds it took to load the model and answer health."""

    def start(self, ready_timeout_s: float = 120.0) -> str:
        """Resolve the model file, start the server on a free loopback port, wait until healthy."""
        if self.base_url is not None:
            return self.base_url
        import xllamacpp  # heavy native import: only when the embedded backend is used

        path = resolve_model_file(self._model, self._models_dir)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self._n_ctx
        params.n_parallel = self._n_parallel
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.cache_prompt = True
        params.n_cache_reuse = self._cache_reuse
        if self._slot_similarity is not None:
            params.slot_prompt_similarity = self._slot_similarity
        if self._cache_ram_mib is not None:
            params.cache_ram_mib = self._cache_ram_mib
        params.endpoint_metrics = True
        params.verbosity = -1
        params.cpuparams.n_threads = self._threads
        params.cpuparams_batch.n_threads = self._threads
        started = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:
            raise ModelFileError(f"llama.cpp could not load {str(path)!r}: {exc}") from exc
        address = str(self._server.listening_address or "")
        if not address:
            self._server = None
            raise ModelFileError(f"llama.cpp could not load {str(path)!r} (no server came up)")
        root = address if address.startswith("http") else f"http://{address}"
        deadline = time.monotonic() + ready_timeout_s
        while True:
            try:
                if httpx.get(f"{root}/health", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise LLMUnavailableError(f"embedded llama.cpp at {root} not healthy after {ready_timeout_s}s")
            time.sleep(0.1)
        self.load_s = time.perf_counter() - started
        self.model_path = path
        self.base_url = f"{root}/v1"
        return self.base_url

    def stop(self) -> None:
        """Stop the server and free the model (idempotent)."""
        server, self._server = self._server, None
        self.base_url = None
        del server

    def __enter__(self) -> EmbeddedLlamaServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
