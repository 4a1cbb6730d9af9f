"""Build the configured LLM backend from settings: a remote OpenAI-compatible server or the embedded one."""

from __future__ import annotations

from dataclasses import dataclass

from agents.llm.embedded import EmbeddedLlamaServer
from agents.llm.llama_server import LlamaServerProcess
from agents.llm.openai_compat import OpenAICompatibleLLM
from knowledge.settings import Settings


@dataclass
class LLMRuntime:
    """The LLM client plus, for the embedded default, the server it owns."""

    llm: OpenAICompatibleLLM
    backend: str
    """``openai-compatible`` (SGLang or any server at ``llm.base_url``), ``llama.cpp-embedded`` (the wheel's
    in-process server) or ``llama.cpp-server`` (a ``llama-server`` child: ``local.server_bin``)."""
    model: str
    """What is being served: the remote model name, or the local model spec."""
    server: EmbeddedLlamaServer | LlamaServerProcess | None = None

    async def aclose(self) -> None:
        """Close the client, then stop the embedded server if there is one."""
        await self.llm.aclose()
        if self.server is not None:
            self.server.stop()


LOCAL_BACKENDS = ("llama.cpp-embedded", "llama.cpp-server")
"""The backends that serve ``local.model`` on this machine (their model file is hashed into provenance)."""


def local_backend(settings: Settings) -> str:
    """Which backend ``start_llm`` starts: the remote server, the ``llama-server`` child, or the wheel."""
    if settings.llm.base_url:
        return "openai-compatible"
    return "llama.cpp-server" if settings.local.server_bin else "llama.cpp-embedded"


def start_llm(settings: Settings) -> LLMRuntime:
    """Connect to ``llm.base_url`` when set, else start the local llama.cpp server (blocking load): the
    ``local.server_bin`` child when set, else the xllamacpp wheel in process."""
    cfg = settings.llm
    api_key = cfg.api_key.get_secret_value() if cfg.api_key else None
    common = {
        "timeout_s": cfg.timeout_s,
        "connect_timeout_s": cfg.connect_timeout_s,
        "max_retries": cfg.max_retries,
        "temperature": cfg.temperature,
    }
    backend = local_backend(settings)
    if cfg.base_url:
        llm = OpenAICompatibleLLM(
            cfg.base_url,
            model=cfg.model,
            api_key=api_key,
            routing_header=cfg.routing_header or None,
            **common,  # type: ignore[arg-type]
        )
        return LLMRuntime(llm=llm, backend=backend, model=cfg.model)
    local = settings.local
    server: EmbeddedLlamaServer | LlamaServerProcess
    if backend == "llama.cpp-server" and local.server_bin:
        server = LlamaServerProcess(
            local.server_bin,
            local.model,
            settings.data_dir / "models",
            log_path=settings.data_dir / "logs" / "llama-server.log",
            threads=local.threads,
            n_ctx=local.n_ctx,
            n_parallel=local.n_parallel,
        )
    else:
        server = EmbeddedLlamaServer(
            local.model,
            settings.data_dir / "models",
            threads=local.threads,
            n_ctx=local.n_ctx,
            n_parallel=local.n_parallel,
        )
    base_url = server.start()
    llm = OpenAICompatibleLLM(base_url, model=local.model, **common)  # type: ignore[arg-type]
    return LLMRuntime(llm=llm, backend=backend, model=local.model, server=server)
