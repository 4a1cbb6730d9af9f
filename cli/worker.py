"""``waypoint worker``: take upload ingest jobs from the durable queue (procrastinate on ``postgres_url``)."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

import typer

log = logging.getLogger(__name__)


def worker(
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Jobs this worker runs at once.")] = 1,
    graph: Annotated[bool, typer.Option("--graph/--no-graph", help="Feed the knowledge graph too.")] = True,
) -> None:
    """Ingest uploaded documents queued by any API replica (needs WAYPOINT_POSTGRES_URL)."""
    from api.ingest_queue import QueueDocuments, run_worker
    from cli.signals import cancel_on_signals
    from graphs.services import open_services
    from knowledge.postgres import is_postgres_url
    from knowledge.settings import Settings

    settings = Settings()
    if not is_postgres_url(settings.postgres_url):
        typer.echo("waypoint worker needs WAYPOINT_POSTGRES_URL=postgresql://... (the queue lives there)", err=True)
        raise typer.Exit(2)

    async def run() -> None:
        task = asyncio.current_task()
        assert task is not None
        grace = settings.ingest.shutdown_grace_s
        cancel_on_signals(task, f"stopping: no new job; a running one has {grace:g} s, then goes back on the queue")
        async with open_services(settings, start=False, graph=graph) as services:
            log.info("worker ready: concurrency %d", concurrency)
            await run_worker(settings, QueueDocuments(services.ingestor), concurrency=concurrency)

    try:
        asyncio.run(run())
    except asyncio.CancelledError:  # stopped by a signal, gracefully
        log.info("worker stopped")
