"""Which durable state the API uses: SQLite files in the data dir, or one Postgres shared by every replica."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.job_store import JobRecords
from api.jobs import JobStore
from graphs.run_store import RunStore
from knowledge.owners import Owner
from knowledge.postgres import is_postgres_url
from knowledge.settings import Settings


@dataclass
class StateStores:
    """The run store and the job store, and what to close."""

    runs: RunStore
    jobs: JobRecords
    backend: str
    """``sqlite`` or ``postgres``."""
    pool: Any = None

    def close(self) -> None:
        """Close both stores (and the shared pool)."""
        self.jobs.close()
        self.runs.close()
        if self.pool is not None:
            self.pool.close()


def open_state_stores(settings: Settings, owner: Owner) -> StateStores:
    """Postgres (schema migrated, one pool for both) when ``postgres_url`` is set; else SQLite in the data dir."""
    if is_postgres_url(settings.postgres_url):
        from api.pg_jobs import PgJobStore
        from graphs.pg_trace_store import PgTraceStore
        from knowledge.postgres import open_pool

        assert settings.postgres_url is not None
        pool = open_pool(settings.postgres_url)
        return StateStores(PgTraceStore(pool), PgJobStore(pool, owner=owner), "postgres", pool)
    from graphs.trace_store import TraceStore

    return StateStores(TraceStore.open(settings.path("runs.sqlite")), JobStore(settings.path("jobs.sqlite")), "sqlite")
