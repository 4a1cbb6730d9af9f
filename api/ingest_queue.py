"""Ingest jobs on a durable queue: procrastinate on the ``postgres_url`` database, run by ``waypoint worker``.

With ``ingest.queue = "postgres"`` an upload is stored in the ``uploads`` table and an
``waypoint.ingest_job`` task is deferred; any worker process takes it, ingests the files and
writes the result into the job row, which every API replica reads (``GET /v1/jobs/{id}``).

A worker killed mid-job (kill -9) stops sending procrastinate heartbeats; every worker looks for
such stalled jobs every ``ingest.stalled_after_s / 3`` seconds and puts them back on the queue, and
the next worker runs the job again from its stored uploads. Re-running is safe: the ingestor's
manifest skips documents already committed and rolls back or commits a half-written batch, so no
vector, graph node or tree is written twice or lost.

A worker told to stop (SIGTERM, Ctrl-C: ``run_worker`` cancelled) takes no new job and gives the
running one ``ingest.shutdown_grace_s`` to finish. Then its ingest thread stops after the batch it is
writing (``IngestStopped``, raised from the progress reporter), the job's row goes back to ``queued``
and procrastinate puts the job back on the queue (``_RetryStopped``), uploads kept: the next worker
finishes it, skipping what was committed. Nothing is written after the worker has let the job go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.deps import DocumentInfo, DocumentService, IngestResult
from api.pg_jobs import QUEUE_OWNER, PgJobStore
from api.routes.documents import CORPUS_SUFFIX, _safe_name
from knowledge.postgres import PostgresError, is_postgres_url, open_pool
from knowledge.settings import Settings

if TYPE_CHECKING:
    from knowledge.ingest import Ingestor

log = logging.getLogger(__name__)

TASK = "waypoint.ingest_job"
_SCHEMA_LOCK = 0x5741_5951
_PROGRESS_EVERY_S = 0.5


class IngestStopped(Exception):
    """Raised in the ingest thread after a committed batch once its job was told to stop."""


class _Reporter:
    """Counts documents and writes the count into the job row at most every ``_PROGRESS_EVERY_S``; the ingestor
    calls it after every committed batch, which is where a stopped job's thread ends (``stop``)."""

    def __init__(self, jobs: PgJobStore, job_id: str) -> None:
        self._jobs, self._job_id = jobs, job_id
        self.done = 0
        self._last = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def stop(self) -> None:
        """End the ingest at its next progress report (after the batch being written)."""
        self._stop.set()

    def __call__(self, n: int) -> None:
        with self._lock:
            self.done += n
            if self._stop.is_set():
                raise IngestStopped(f"job {self._job_id} stopped after {self.done} documents")
            now = time.monotonic()
            if now - self._last < _PROGRESS_EVERY_S:
                return
            self._last = now
        try:
            self._jobs.set_progress(self._job_id, {"documents_done": self.done})
        except Exception:  # progress is informative: never fail the ingest for it
            log.exception("could not record the progress of job %s", self._job_id)


_progress: ContextVar[_Reporter | None] = ContextVar("waypoint_job_progress", default=None)
"""The running job's progress reporter (documents read), seen by ``QueueDocuments`` in the ingest thread."""


async def _in_thread(call: Callable[[], Any], reporter: _Reporter | None) -> Any:
    """``call()`` in a worker thread. Cancelled, the thread is told (through the job's ``reporter``) to stop after
    its current batch and awaited, so the job is let go only once nothing more is being written for it."""
    thread = asyncio.ensure_future(asyncio.to_thread(call))
    try:
        return await asyncio.shield(thread)
    except asyncio.CancelledError:
        if reporter is not None:
            reporter.stop()
        with contextlib.suppress(Exception):  # IngestStopped, or whatever else ended the thread
            await thread
        raise


class QueueDocuments:
    """The worker's ``DocumentService``: the ingestor, reporting progress into the running job's row."""

    def __init__(self, ingestor: Ingestor) -> None:
        self._ingestor = ingestor
        self._lock = asyncio.Lock()

    async def ingest_paths(
        self, paths: Sequence[Path], *, tenant: str, names: Sequence[str] | None = None
    ) -> IngestResult:
        progress = _progress.get()
        async with self._lock:
            report = await _in_thread(
                partial(self._ingestor.ingest_paths, list(paths), tenant, progress=progress, names=names), progress
            )
        return _result(report)

    async def ingest_corpus(self, path: Path, *, tenant: str, name: str | None = None) -> IngestResult:
        progress = _progress.get()
        async with self._lock:
            report = await _in_thread(
                partial(self._ingestor.ingest_corpus, path, tenant, progress=progress, name=name), progress
            )
        return _result(report)

    async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
        docs = await asyncio.to_thread(self._ingestor.list_documents, tenant)
        return [DocumentInfo(id=d.doc_id, title=d.title, source=d.source, chunks=d.chunks) for d in docs]

    async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
        async with self._lock:
            return await asyncio.to_thread(self._ingestor.delete_document, doc_id, tenant)


def _result(report: Any) -> IngestResult:
    return IngestResult(
        documents=len(report.added) + len(report.replaced),
        chunks=report.chunks,
        skipped=len(report.unchanged),
        errors=[f"{f.source}: {f.error}" for f in report.failed],
    )


def _queue_app(url: str) -> Any:
    try:
        import procrastinate
    except ImportError as exc:
        raise PostgresError("the ingest queue needs procrastinate: pip install '.[postgres]'") from exc
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))


def ensure_queue_schema(pool: Any) -> None:
    """Apply procrastinate's schema once (its own ``procrastinate_*`` tables), under a lock for racing starts."""
    from procrastinate.schema import SchemaManager

    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        if conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()[0] is None:
            conn.execute(SchemaManager.get_schema())


def _store_uploads(pool: Any, job_id: str, files: list[tuple[str, bytes]]) -> None:
    with pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute("UPDATE jobs SET owner = %s WHERE id = %s", (QUEUE_OWNER, job_id))
        cur.executemany(
            "INSERT INTO uploads (job_id, idx, name, data) VALUES (%s, %s, %s, %s)",
            [(job_id, i, name, data) for i, (name, data) in enumerate(files)],
        )


def _load_uploads(pool: Any, job_id: str) -> list[tuple[int, str, bytes]]:
    with pool.connection() as conn:
        rows = conn.execute("SELECT idx, name, data FROM uploads WHERE job_id = %s ORDER BY idx", (job_id,))
        return [(int(i), str(n), bytes(d)) for i, n, d in rows.fetchall()]


def _job_status(pool: Any, job_id: str) -> str | None:
    with pool.connection() as conn:
        row = conn.execute("SELECT status FROM jobs WHERE id = %s", (job_id,)).fetchone()
    return None if row is None else str(row[0])


def _drop_uploads(pool: Any, job_id: str) -> None:
    with pool.connection() as conn:
        conn.execute("DELETE FROM uploads WHERE job_id = %s", (job_id,))


class IngestQueue:
    """The API side: store an upload and defer its ingest task."""

    def __init__(self, url: str, pool: Any) -> None:
        self._pool = pool
        self._app = _queue_app(url)

    async def open(self) -> None:
        """Apply the queue schema if needed and connect."""
        await asyncio.to_thread(ensure_queue_schema, self._pool)
        await self._app.open_async()

    async def close(self) -> None:
        """Disconnect."""
        await self._app.close_async()

    async def submit(self, job_id: str, tenant: str, files: list[tuple[str, bytes]]) -> None:
        """Store the files with the job and queue it for a worker."""
        await asyncio.to_thread(_store_uploads, self._pool, job_id, files)
        await self._app.configure_task(name=TASK).defer_async(job_id=job_id, tenant=tenant)


async def execute_job(pool: Any, jobs: PgJobStore, documents: DocumentService, job_id: str, tenant: str) -> None:
    """Ingest one queued job's uploads and record the result (a job already finished is left alone)."""
    if await asyncio.to_thread(_job_status, pool, job_id) in (None, "done", "failed"):
        await asyncio.to_thread(_drop_uploads, pool, job_id)  # a retry of a job that finished as it was stopped
        return
    await asyncio.to_thread(jobs.set_running, job_id)
    uploads = await asyncio.to_thread(_load_uploads, pool, job_id)
    reporter = _Reporter(jobs, job_id)
    token = _progress.set(reporter)
    try:
        with tempfile.TemporaryDirectory(prefix="waypoint-job-") as tmp:
            named: list[tuple[Path, str]] = []  # the temp file and the client's name (the doc id comes from it)
            for idx, name, data in uploads:
                path = Path(tmp) / _safe_name(name, idx)
                path.write_bytes(data)
                named.append((path, name))
            corpora = [(p, n) for p, n in named if p.suffix.lower() == CORPUS_SUFFIX]
            others = [(p, n) for p, n in named if p.suffix.lower() != CORPUS_SUFFIX]
            totals: dict[str, Any] = {"documents": 0, "chunks": 0, "skipped": 0, "errors": []}
            results = [await documents.ingest_corpus(p, tenant=tenant, name=n) for p, n in corpora]
            if others:
                paths, names = [p for p, _ in others], [n for _, n in others]
                results.append(await documents.ingest_paths(paths, tenant=tenant, names=names))
            for r in results:
                for key, value in asdict(r).items():
                    totals[key] += value
        await asyncio.to_thread(jobs.set_progress, job_id, {"documents_done": reporter.done})
        await asyncio.to_thread(jobs.finish, job_id, result=totals)
    except asyncio.CancelledError:  # the worker is stopping: the job goes back on the queue, its uploads kept
        log.warning("ingest job %s stopped after %d documents: back on the queue", job_id, reporter.done)
        await asyncio.shield(asyncio.to_thread(jobs.requeue, job_id, {"documents_done": reporter.done}))
        raise
    except Exception as exc:
        log.exception("ingest job %s failed", job_id)
        await asyncio.to_thread(jobs.finish, job_id, error=f"{type(exc).__name__}: {exc}")
    finally:
        _progress.reset(token)
    await asyncio.to_thread(_drop_uploads, pool, job_id)


def _retry_stopped() -> Any:
    """procrastinate's retry decision for the ingest task: a job cancelled by its worker's shutdown (after
    ``shutdown_grace_s``) goes back on the queue at once; a job that failed is not retried (its error is its
    result)."""
    from procrastinate import BaseRetryStrategy, RetryDecision

    class _RetryStopped(BaseRetryStrategy):
        def get_retry_decision(self, *, exception: BaseException, job: Any) -> RetryDecision | None:
            return RetryDecision(retry_in={"seconds": 0}) if isinstance(exception, asyncio.CancelledError) else None

    return _RetryStopped()


async def _retry_stalled(app: Any, stalled_after_s: float) -> None:
    """Put the jobs of workers that stopped sending heartbeats back on the queue."""
    while True:
        try:
            for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_after_s, task_name=TASK):
                log.warning("retrying ingest job %s: its worker stopped", job.task_kwargs.get("job_id"))
                await app.job_manager.retry_job(job)
        except Exception:  # a database hiccup must not end the worker
            log.exception("stalled-job check failed")
        await asyncio.sleep(max(stalled_after_s / 3, 0.5))


async def run_worker(settings: Settings, documents: DocumentService, *, concurrency: int = 1) -> None:
    """Take ingest jobs from the queue until cancelled."""
    if not is_postgres_url(settings.postgres_url):
        raise PostgresError("waypoint worker needs WAYPOINT_POSTGRES_URL (the queue lives in Postgres)")
    assert settings.postgres_url is not None
    pool = await asyncio.to_thread(open_pool, settings.postgres_url)
    try:
        await asyncio.to_thread(ensure_queue_schema, pool)
        jobs = PgJobStore(pool)
        app = _queue_app(settings.postgres_url)

        @app.task(name=TASK, retry=_retry_stopped())  # type: ignore[untyped-decorator]
        async def ingest_job(job_id: str, tenant: str) -> None:
            await execute_job(pool, jobs, documents, job_id, tenant)

        stalled = settings.ingest.stalled_after_s
        async with app.open_async():
            retry = asyncio.create_task(_retry_stalled(app, stalled), name="retry-stalled-ingest")
            try:
                await app.run_worker_async(
                    concurrency=concurrency,
                    update_heartbeat_interval=max(stalled / 5, 0.2),
                    stalled_worker_timeout=stalled,
                    shutdown_graceful_timeout=settings.ingest.shutdown_grace_s,
                    install_signal_handlers=False,
                )
            finally:
                retry.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await retry
    finally:
        await asyncio.to_thread(pool.close)
