"""``waypoint serve``: the API (and the trace viewer) on the embedded defaults, sample knowledge base included."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from api.deps import AppDeps, DepsFactory, DocumentService
    from knowledge.settings import Settings

log = logging.getLogger(__name__)

SAMPLE_KB = Path(__file__).resolve().parent / "sample_kb"
"""Invented Markdown documents (CC0) about Harrow Point, linked for multi-hop questions."""


def sample_documents() -> list[Path]:
    """The sample knowledge base's documents (its README is not one)."""
    return sorted(p for p in SAMPLE_KB.glob("*.md") if p.name != "README.md")


def is_loopback(host: str) -> bool:
    """True for loopback addresses and ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def ingest_sample(documents: DocumentService, settings: Settings) -> bool:
    """Ingest the sample knowledge base into the default tenant once; True when it ran now."""
    marker = settings.path("sample_kb.ingested")
    if marker.exists():
        return False
    result = await documents.ingest_paths(sample_documents(), tenant=settings.default_tenant)
    if result.errors:
        log.warning("sample knowledge base: %d files failed: %s", len(result.errors), result.errors)
    marker.write_text(f"{result.documents} documents, {result.chunks} chunks\n")
    log.info("sample knowledge base ingested: %d documents, %d chunks", result.documents, result.chunks)
    return True


def _with_sample(sample: bool) -> DepsFactory:
    """The default deps, plus the sample knowledge base ingested on first start."""
    from api.wiring import open_app_deps

    @asynccontextmanager
    async def factory(settings: Settings) -> AsyncIterator[AppDeps]:
        async with open_app_deps(settings) as deps:
            if sample:
                await ingest_sample(deps.documents, settings)
            yield deps

    return factory


def serve(
    host: str = typer.Option(None, help="Bind address (default: api.host, 127.0.0.1)."),
    port: int = typer.Option(None, help="Bind port (default: api.port, 8000)."),
    sample: bool = typer.Option(True, "--sample/--no-sample", help="Ingest the sample knowledge base on first start."),
) -> None:
    """Serve the chat API, the OpenAI-compatible endpoint and the trace viewer."""
    import uvicorn

    from api.app import create_app
    from api.logs import configure_json_logging
    from knowledge.settings import Settings

    settings = Settings()
    api = settings.api.model_copy(update={k: v for k, v in (("host", host), ("port", port)) if v is not None})
    settings = settings.model_copy(update={"api": api})
    configure_json_logging()
    if api.api_keys_file is None and not is_loopback(api.host):
        log.warning(
            "NO API KEYS CONFIGURED and binding to %s: anyone who can reach this address uses the default tenant. "
            "Set WAYPOINT_API_API_KEYS_FILE to a JSON file of {key: tenant}.",
            api.host,
        )
    app = create_app(settings, deps_factory=_with_sample(sample))
    uvicorn.run(
        app, host=api.host, port=api.port, log_config=None, timeout_graceful_shutdown=int(api.shutdown_grace_s) + 3
    )
