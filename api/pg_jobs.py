"""Ingest job records on Postgres, shared by API replicas: a job submitted to one is visible from all.

Each job records its owner (the process running it). A restarting replica does not fail other
replicas' jobs: only jobs whose owner is dead (``knowledge.owners``) are marked failed.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from api.jobs import Job
from knowledge.owners import Owner, owner_dead

INTERRUPTED = "interrupted: the server process running this job stopped"
QUEUE_OWNER = "queue"
"""Owner of a job handed to the durable queue: its workers' liveness is the queue's business (stalled-job retry)."""


class PgJobStore:
    """Tenant-scoped job records in the ``jobs`` table."""

    def __init__(self, pool: Any, *, owner: Owner | None = None, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owner = owner
        self._owns_pool = owns_pool

    @classmethod
    def open(cls, url: str, *, owner: Owner | None = None) -> PgJobStore:
        """Connect to ``url`` and migrate the schema to the latest version."""
        from knowledge.postgres import open_pool

        return cls(open_pool(url), owner=owner, owns_pool=True)

    def close(self) -> None:
        """Close the pool when this store opened it."""
        if self._owns_pool:
            self._pool.close()

    def _execute(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._pool.connection() as conn:
            cur = conn.execute(sql, params)
            return list(cur.fetchall()) if cur.description else []

    def create(self, tenant: str, files: list[str]) -> Job:
        """A new queued job, owned by this process."""
        job = Job(id=f"job_{uuid.uuid4().hex}", status="queued", created_at=time.time(), files=files)
        self._execute(
            "INSERT INTO jobs (id, tenant, status, created_at, files, owner) VALUES (%s, %s, %s, %s, %s, %s)",
            (job.id, tenant, job.status, job.created_at, json.dumps(files), self._owner.id if self._owner else None),
        )
        return job

    def set_running(self, job_id: str) -> None:
        """Mark a job as started."""
        self._execute("UPDATE jobs SET status = 'running' WHERE id = %s", (job_id,))

    def finish(self, job_id: str, *, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Mark a job done (with its result) or failed (with its error)."""
        status = "failed" if error is not None else "done"
        self._execute(
            "UPDATE jobs SET status = %s, finished_at = %s, result = %s, error = %s WHERE id = %s",
            (status, time.time(), json.dumps(result) if result is not None else None, error, job_id),
        )

    def requeue(self, job_id: str, progress: dict[str, int]) -> None:
        """Put a running job back to queued (its worker stopped it; another takes it), with how far it got."""
        self._execute(
            "UPDATE jobs SET status = 'queued', progress = %s WHERE id = %s AND status = 'running'",
            (json.dumps(progress), job_id),
        )

    def set_progress(self, job_id: str, progress: dict[str, int]) -> None:
        """Record how far a running job got."""
        self._execute("UPDATE jobs SET progress = %s WHERE id = %s", (json.dumps(progress), job_id))

    def get(self, job_id: str, *, tenant: str) -> Job | None:
        """The job, or None when it does not exist or belongs to another tenant."""
        rows = self._execute(
            "SELECT id, status, created_at, finished_at, files, result, error, progress FROM jobs "
            "WHERE id = %s AND tenant = %s",
            (job_id, tenant),
        )
        if not rows:
            return None
        id_, status, created, finished, files, result, error, progress = rows[0]
        return Job(
            id=id_,
            status=status,
            created_at=created,
            finished_at=finished,
            files=json.loads(files),
            result=json.loads(result) if result else None,
            error=error,
            progress=json.loads(progress) if progress else None,
        )

    def interrupt_dead(self, me: Owner, *, lease_s: float) -> list[str]:
        """Fail the queued or running jobs whose owner is dead; their ids."""
        now = time.time()
        failed: list[str] = []
        with self._pool.connection() as conn, conn.transaction():
            rows = conn.execute(
                "SELECT j.id, j.owner, o.host, o.pid, o.heartbeat_at FROM jobs j LEFT JOIN owners o ON o.id = j.owner "
                "WHERE j.status IN ('queued', 'running') AND j.owner IS DISTINCT FROM %s FOR UPDATE OF j SKIP LOCKED",
                (QUEUE_OWNER,),
            ).fetchall()
            for job_id, owner_id, host, pid, beat in rows:
                if owner_dead(owner_id, host, pid, beat, me=me, lease_s=lease_s, now=now):
                    conn.execute(
                        "UPDATE jobs SET status = 'failed', error = %s, finished_at = %s WHERE id = %s",
                        (INTERRUPTED, now, job_id),
                    )
                    failed.append(job_id)
        return failed
