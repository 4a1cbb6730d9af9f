"""Fixtures shared by every test package. Sub-folders keep their own conftest.py for the rest."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pg_fixtures import fresh_pg_url, pg_database, pg_url  # noqa: F401  (Postgres fixtures for every package)

from agents.llm.embedded import EmbeddedLlamaServer
from agents.llm.openai_compat import OpenAICompatibleLLM
from knowledge.settings import AgentConfig, APIConfig, LLMConfig, LocalLLMConfig, Settings

REPO = Path(__file__).resolve().parents[1]
MODELS_DIR = REPO / ".waypoint" / "models"
"""Assembled GGUF files are kept here between test runs (assembling is cheap, but 0.5-1 GB of writes)."""
TEST_MODEL = "qwen2.5-0.5b"
"""The real embedded model most integration tests use: the small one, for speed."""
DEFAULT_MODEL = LocalLLMConfig().model
"""The embedded model ``make run`` serves (1.5B): the agent's end-to-end test answers with it."""
TEST_HOSTS = ("test", "t", "testserver")
"""Host names the in-process (ASGI) test clients use: the Host allow-list must accept them."""


INTEGRATION_FIXTURES = frozenset(
    {"embedded_server", "default_server", "real_llm", "default_llm", "embedder", "falkordb_server", "live"}
)
"""Fixtures that bring up a real part: a model (LLM or embedding), a server process, a live HTTP server."""
INTEGRATION_MARKERS = frozenset({"slow", "gpu", "neo4j", "qdrant_server", "browser"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tell unit and integration tests apart: ``-m unit`` runs in-process doubles only, ``-m integration`` the rest.

    A test is ``integration`` when it is marked so (or with one of INTEGRATION_MARKERS) or uses one of
    INTEGRATION_FIXTURES; every other test is ``unit``.
    """
    for item in items:
        names = {m.name for m in item.iter_markers()}
        fixtures = set(getattr(item, "fixturenames", ()))
        if "integration" in names or names & INTEGRATION_MARKERS or fixtures & INTEGRATION_FIXTURES:
            item.add_marker(pytest.mark.integration)
        else:
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach beyond loopback."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else None
        if isinstance(host, str) and host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("127."):
            raise RuntimeError(f"test tried to reach {address!r}: only loopback is allowed")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a fresh data dir per test and the small local model.

    No start-up prefix warm-up: tests that script or count LLM calls must see only their own (the warm-up's
    tests turn it on). The agent plans first (``agent.first_pass`` off): scripted doubles reply to the planner
    first; the first pass's own tests, and the served default's real-stack test, turn it on.
    """
    return Settings(
        data_dir=tmp_path / "data",
        llm=LLMConfig(warm_prefix=False),
        agent=AgentConfig(first_pass=False),
        local=LocalLLMConfig(model=TEST_MODEL, n_ctx=8192),
        api=APIConfig(allowed_hosts=list(TEST_HOSTS)),
    )


def _serve(model: str, n_parallel: int) -> Iterator[EmbeddedLlamaServer]:
    server = EmbeddedLlamaServer(model, MODELS_DIR, n_ctx=8192, n_parallel=n_parallel)
    server.start()
    yield server
    server.stop()


async def _client(server: EmbeddedLlamaServer, model: str) -> AsyncIterator[OpenAICompatibleLLM]:
    assert server.base_url is not None
    llm = OpenAICompatibleLLM(server.base_url, model=model, timeout_s=300)
    yield llm
    await llm.aclose()


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[EmbeddedLlamaServer]:
    """One real embedded llama.cpp server (Qwen2.5 0.5B) for the whole session."""
    yield from _serve(TEST_MODEL, n_parallel=2)


@pytest.fixture
async def real_llm(embedded_server: EmbeddedLlamaServer) -> AsyncIterator[OpenAICompatibleLLM]:
    """A client of the real embedded server."""
    async for llm in _client(embedded_server, TEST_MODEL):
        yield llm


@pytest.fixture(scope="session")
def default_server() -> Iterator[EmbeddedLlamaServer]:
    """One real embedded llama.cpp server with the default model, started only for the tests that ask for it."""
    yield from _serve(DEFAULT_MODEL, n_parallel=1)


@pytest.fixture
async def default_llm(default_server: EmbeddedLlamaServer) -> AsyncIterator[OpenAICompatibleLLM]:
    """A client of the real embedded server with the default model."""
    async for llm in _client(default_server, DEFAULT_MODEL):
        yield llm
