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
    from knowledge.embeddings import build_embedder
    from knowledge.indexes import open_indexes
    from knowledge.ingest import Ingestor
    from knowledge.postgres import is_postgres_url
    from knowledge.settings import Settings
    from knowledge.vector_store import open_vector_store

    settings = Settings()
    if not is_postgres_url(settings.postgres_url):
        typer.echo("waypoint worker needs WAYPOINT_POSTGRES_URL=postgresql://... (the queue lives there)", err=True)
        raise typer.Exit(2)
    embedder = build_embedder(settings)
    store = open_vector_store(settings)
    try:
        with open_indexes(settings, graph=graph) as indexes:
            ingestor = Ingestor(settings, embedder, store, sinks=indexes.sinks)
            try:
                log.info("worker ready: concurrency %d", concurrency)
                asyncio.run(run_worker(settings, QueueDocuments(ingestor), concurrency=concurrency))
            finally:
                ingestor.close()
    finally:
        store.close()
