"""Ingest jobs: status kept in SQLite in the data dir (survives restarts; a job cut short is marked failed)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JobStatus = Literal["queued", "running", "done", "failed"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished_at REAL,
    files TEXT NOT NULL,
    result TEXT,
    error TEXT
);
"""


class Job(BaseModel):
    """One ingest job as its tenant sees it."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: JobStatus
    created_at: float
    finished_at: float | None = None
    files: list[str] = Field(default_factory=list)
    """Uploaded file names."""
    result: dict[str, Any] | None = None
    """Documents, chunks, skipped and per-file errors, once done."""
    error: str | None = None
    """Why the job failed."""
    progress: dict[str, int] | None = None
    """While a queue worker runs it: ``{"documents_done": n}`` (documents read so far, failed ones included)."""


class JobStore:
    """Tenant-scoped job records."""

    def __init__(self, path: Path | str) -> None:
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._execute(
            "UPDATE jobs SET status = 'failed', error = 'interrupted by a server restart', finished_at = ? "
            "WHERE status IN ('queued', 'running')",
            (time.time(),),
        )

    def _execute(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def interrupt_dead(self, me: object, *, lease_s: float) -> list[str]:
        """Nothing to do: one process owns a data dir, and opening the store failed every unfinished job."""
        return []

    def create(self, tenant: str, files: list[str]) -> Job:
        """A new queued job."""
        job = Job(id=f"job_{uuid.uuid4().hex}", status="queued", created_at=time.time(), files=files)
        self._execute(
            "INSERT INTO jobs (id, tenant, status, created_at, files) VALUES (?, ?, ?, ?, ?)",
            (job.id, tenant, job.status, job.created_at, json.dumps(files)),
        )
        return job

    def set_running(self, job_id: str) -> None:
        """Mark a job as started."""
        self._execute("UPDATE jobs SET status = 'running' WHERE id = ?", (job_id,))

    def finish(self, job_id: str, *, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Mark a job done (with its result) or failed (with its error)."""
        status = "failed" if error is not None else "done"
        self._execute(
            "UPDATE jobs SET status = ?, finished_at = ?, result = ?, error = ? WHERE id = ?",
            (status, time.time(), json.dumps(result) if result is not None else None, error, job_id),
        )

    def get(self, job_id: str, *, tenant: str) -> Job | None:
        """The job, or None when it does not exist or belongs to another tenant."""
        rows = self._execute(
            "SELECT id, status, created_at, finished_at, files, result, error FROM jobs WHERE id = ? AND tenant = ?",
            (job_id, tenant),
        )
        if not rows:
            return None
        id_, status, created, finished, files, result, error = rows[0]
        return Job(
            id=id_,
            status=status,
            created_at=created,
            finished_at=finished,
            files=json.loads(files),
            result=json.loads(result) if result else None,
            error=error,
        )
