"""Which job store the API uses: SQLite in the data dir, or the Postgres shared by every replica.

The run store (runs, events, spans) is chosen with the other durable state in ``graphs.stores``; the jobs
of the document API live here, with the pool the Postgres ingest queue shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.job_store import JobRecords
from api.jobs import JobStore
from knowledge.owners import Owner
from knowledge.postgres import is_postgres_url
from knowledge.settings import Settings


@dataclass
class StateStores:
    """The job store, and the pool to close (Postgres only)."""

    jobs: JobRecords
    backend: str
    """``sqlite`` or ``postgres``."""
    pool: Any = None

    def close(self) -> None:
        """Close the store (and the pool)."""
        self.jobs.close()
        if self.pool is not None:
            self.pool.close()


def open_state_stores(settings: Settings, owner: Owner) -> StateStores:
    """Postgres (schema migrated) when ``postgres_url`` is set; else SQLite in the data dir."""
    if is_postgres_url(settings.postgres_url):
        from api.pg_jobs import PgJobStore
        from knowledge.postgres import open_pool

        assert settings.postgres_url is not None
        pool = open_pool(settings.postgres_url)
        return StateStores(PgJobStore(pool, owner=owner), "postgres", pool)
    return StateStores(JobStore(settings.path("jobs.sqlite")), "sqlite")
