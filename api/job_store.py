"""The ingest job store's contract, met by the SQLite ``JobStore`` and the Postgres ``PgJobStore``."""

from __future__ import annotations

from typing import Any, Protocol

from api.jobs import Job
from knowledge.owners import Owner


class JobRecords(Protocol):
    """Tenant-scoped ingest job records."""

    def close(self) -> None:
        """Release the connection(s)."""
        ...

    def create(self, tenant: str, files: list[str]) -> Job:
        """A new queued job (owned by this process)."""
        ...

    def set_running(self, job_id: str) -> None:
        """Mark a job as started."""
        ...

    def finish(self, job_id: str, *, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Mark a job done (with its result) or failed (with its error)."""
        ...

    def get(self, job_id: str, *, tenant: str) -> Job | None:
        """The job, or None (unknown or another tenant's)."""
        ...

    def interrupt_dead(self, me: Owner, *, lease_s: float) -> list[str]:
        """Fail the unfinished jobs of dead owners; their ids."""
        ...
