"""The run store's contract: what the API and the trace viewer need, met by SQLite and Postgres alike.

``graphs.tracing.store.TraceStore`` (SQLite in the data dir, one process) and
``graphs.tracing.pg_store.PgTraceStore`` (Postgres, shared by replicas) both implement it.
"""

from __future__ import annotations

from typing import Protocol

from graphs.events import Envelope
from graphs.tracing.store import RunRecord
from knowledge.owners import Owner


class RunStore(Protocol):
    """Tenant-scoped runs and their events."""

    def close(self) -> None:
        """Release the connection(s)."""
        ...

    def start_run(
        self,
        *,
        run_id: str,
        tenant: str,
        question: str,
        thread_id: str | None = None,
        started_at: float | None = None,
        owner: str | None = None,
    ) -> RunRecord:
        """Register a run before its first event (``owner``: the process running it)."""
        ...

    def append(self, envelope: Envelope) -> None:
        """Store one event."""
        ...

    def get_run(self, run_id: str, *, tenant: str) -> RunRecord | None:
        """The run, or None (unknown or another tenant's)."""
        ...

    def events(self, run_id: str, *, tenant: str, after_seq: int = -1) -> list[Envelope]:
        """The run's events after ``after_seq``, in order."""
        ...

    def thread_runs(self, thread_id: str, *, tenant: str) -> list[RunRecord]:
        """A thread's runs, oldest first."""
        ...

    def thread_exists(self, thread_id: str, *, tenant: str) -> bool:
        """True when the tenant has a run on this thread."""
        ...

    def event_count(self, run_id: str, *, tenant: str) -> int:
        """How many events the run has stored."""
        ...

    def list_runs(
        self,
        *,
        tenant: str,
        thread_id: str | None = None,
        status: str | None = None,
        since: float | None = None,
        until: float | None = None,
        before: tuple[float, str] | None = None,
        limit: int = 50,
    ) -> list[RunRecord]:
        """The tenant's runs, newest first, filtered, keyset-paginated."""
        ...

    def usage_by_run(self, run_ids: list[str], *, tenant: str) -> dict[str, dict[str, int]]:
        """LLM calls and tokens per run."""
        ...

    def purge(self, *, older_than: float) -> int:
        """Delete runs last active before ``older_than``."""
        ...

    def heartbeat(self, owner: Owner) -> None:
        """Record that ``owner`` is alive now (registers it on first call)."""
        ...

    def interrupt_dead(self, me: Owner, *, lease_s: float) -> list[str]:
        """Close out the running runs of dead owners (``error`` + ``done(interrupted)``); their ids."""
        ...

    def request_cancel(self, run_id: str, *, tenant: str) -> bool:
        """Ask the run's owner to cancel it; False when the run is unknown or not running."""
        ...

    def cancel_requests(self, owner: Owner) -> list[str]:
        """Running runs of ``owner`` whose cancellation was asked for."""
        ...
