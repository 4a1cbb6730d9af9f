"""Upload jobs on the durable queue (procrastinate on Postgres): ``waypoint worker`` ingests them; a worker killed
with -9 mid-job, or stopped with SIGTERM, is replaced by another that finishes the job with no point missing or
written twice."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI

from api.app import create_app
from api.deps import AppDeps, DocumentInfo, IngestResult, RunSpec
from api.ingest_queue import run_worker
from graphs.events import Envelope
from knowledge.settings import Settings

pytestmark = pytest.mark.postgres
REPO = Path(__file__).resolve().parents[2]


class Docs:
    """Documents double that records what it was asked to ingest."""

    def __init__(self) -> None:
        self.ingested: list[tuple[str, str]] = []
        self.names: list[str] = []

    async def ingest_paths(
        self, paths: Sequence[Path], *, tenant: str, names: Sequence[str] | None = None
    ) -> IngestResult:
        self.ingested += [(tenant, p.read_text()) for p in paths]
        self.names += list(names or [])
        return IngestResult(documents=len(paths), chunks=len(paths))

    async def ingest_corpus(self, path: Path, *, tenant: str, name: str | None = None) -> IngestResult:
        self.names += [name] if name else []
        lines = [x for x in path.read_text().splitlines() if x.strip()]
        self.ingested += [(tenant, json.loads(x)["text"]) for x in lines]
        return IngestResult(documents=len(lines), chunks=len(lines), errors=["corpus: 1 bad line"])

    async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
        return []

    async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
        return False


async def _no_runs(spec: RunSpec) -> AsyncIterator[Envelope]:
    raise AssertionError("no runs here")
    yield  # pragma: no cover


def _queued_settings(settings: Settings, pg_url: str) -> Settings:
    ingest = settings.ingest.model_copy(update={"queue": "postgres", "stalled_after_s": 2.0})
    return settings.model_copy(update={"postgres_url": pg_url, "ingest": ingest})


@contextlib.asynccontextmanager
async def _api(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    @contextlib.asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        yield AppDeps(run=_no_runs, documents=Docs())

    app: FastAPI = create_app(settings, deps_factory=factory)
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


async def _wait_job(c: httpx.AsyncClient, job_id: str, *, timeout: float, status: str = "done") -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = (await c.get(f"/v1/jobs/{job_id}")).json()
        if job["status"] == status:
            return job
        await asyncio.sleep(0.1)
    raise AssertionError(f"job did not reach {status!r}: {job}")


async def test_an_upload_waits_on_the_queue_until_a_worker_ingests_it(settings: Settings, pg_url: str) -> None:
    settings = _queued_settings(settings, pg_url)
    corpus = b'{"id": "p1", "text": "Owls hunt."}\n{"id": "p2", "text": "Voles dig."}\n'
    files = [("files", ("note.md", b"# Note\nHello.", "text/markdown")), ("files", ("c.jsonl", corpus, "x/y"))]
    async with _api(settings) as c:
        job = (await c.post("/v1/documents", files=files)).json()
        await asyncio.sleep(0.5)
        assert (await c.get(f"/v1/jobs/{job['id']}")).json()["status"] == "queued"  # no worker yet, nothing lost
        docs = Docs()
        worker = asyncio.create_task(run_worker(settings, docs))
        try:
            done = await _wait_job(c, job["id"], timeout=30)
        finally:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
    assert done["result"] == {"documents": 3, "chunks": 3, "skipped": 0, "errors": ["corpus: 1 bad line"]}
    assert sorted(text for _, text in docs.ingested) == ["# Note\nHello.", "Owls hunt.", "Voles dig."]
    assert sorted(docs.names) == ["c.jsonl", "note.md"]  # the client's names, so doc ids do not depend on temp paths
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM uploads").fetchone() == (0,)


def _start_worker(data: Path, pg_url: str, log: Path, *, grace_s: float = 10.0) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WAYPOINT_")}
    env.update(
        {
            "WAYPOINT_DATA_DIR": str(data),
            "WAYPOINT_POSTGRES_URL": pg_url,
            "WAYPOINT_INGEST_STALLED_AFTER_S": "2",
            "WAYPOINT_INGEST_BATCH_DOCS": "32",
            "WAYPOINT_INGEST_SHUTDOWN_GRACE_S": str(grace_s),
            "PYTHONPATH": str(REPO),
        }
    )
    code = "import sys; from cli import main; sys.argv = ['waypoint', 'worker', '--no-graph']; main()"
    out = log.open("wb")
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=out, stderr=out, cwd=REPO)


def _stop(worker: subprocess.Popen[bytes], log: Path) -> int:
    """SIGTERM, then the exit status; a worker still alive two minutes on is hung (killed, its log shown)."""
    worker.terminate()
    try:
        return worker.wait(timeout=120)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
        raise AssertionError(f"the worker did not stop on SIGTERM:\n{log.read_text()[-3000:]}") from None


def _committed(pg_url: str) -> int:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT COUNT(*) FROM documents WHERE content_hash IS NOT NULL").fetchone()
    return int(row[0]) if row else 0


@pytest.mark.slow
async def test_a_worker_killed_mid_job_is_replaced_and_nothing_is_missing_or_doubled(
    settings: Settings, pg_url: str, tmp_path: Path
) -> None:
    n = 1500
    settings = _queued_settings(settings, pg_url)
    lines = [
        json.dumps({"id": f"p{i:05d}", "title": f"P{i}", "text": f"Passage {i} about item {i * 7}."}) for i in range(n)
    ]
    data = tmp_path / "worker-data"  # both workers use it in turn: the embedded Qdrant locks the folder while open
    async with _api(settings) as c:
        files = [("files", ("corpus.jsonl", "\n".join(lines).encode(), "application/jsonl"))]
        job = (await c.post("/v1/documents", files=files)).json()
        first = _start_worker(data, pg_url, tmp_path / "w1.log")
        try:
            deadline = time.monotonic() + 120
            while _committed(pg_url) < 64 and time.monotonic() < deadline and first.poll() is None:
                await asyncio.sleep(0.1)
            assert 64 <= _committed(pg_url) < n, (tmp_path / "w1.log").read_text()[-2000:]
            running = (await c.get(f"/v1/jobs/{job['id']}")).json()  # the first batch's progress is written at once
            assert running["status"] == "running" and running["progress"]["documents_done"] >= 32
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        assert (await c.get(f"/v1/jobs/{job['id']}")).json()["status"] == "running"
        second = _start_worker(data, pg_url, tmp_path / "w2.log")
        try:
            done = await _wait_job(c, job["id"], timeout=240)
        finally:
            _stop(second, tmp_path / "w2.log")
    result = done["result"]
    assert result["documents"] + result["skipped"] == n and result["skipped"] >= 64 and not result["errors"]
    assert _committed(pg_url) == n
    assert done["progress"]["documents_done"] == n  # the second worker read every passage (committed ones skipped)
    from knowledge.vector_store import open_vector_store

    store = open_vector_store(settings.model_copy(update={"data_dir": data}))
    try:
        assert store.count(settings.default_tenant) == n  # one point per passage: none missing, none twice
        assert store.count(settings.default_tenant, live=False) == 0
    finally:
        store.close()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM documents WHERE pending_hash IS NOT NULL").fetchone() == (0,)


async def test_a_job_that_cannot_be_queued_fails_clearly(
    settings: Settings, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.ingest_queue import IngestQueue

    async def broken(self: IngestQueue, job_id: str, tenant: str, files: list[tuple[str, bytes]]) -> None:
        raise OSError("queue down")

    monkeypatch.setattr(IngestQueue, "submit", broken)
    async with _api(_queued_settings(settings, pg_url)) as c:
        r = await c.post("/v1/documents", files=[("files", ("a.md", b"# A\ntext", "text/markdown"))])
        assert r.status_code == 503 and "queue" in r.json()["error"]["message"]
    with psycopg.connect(pg_url) as conn:
        (status, error), *_ = conn.execute("SELECT status, error FROM jobs").fetchall()
    assert status == "failed" and "could not queue" in error


def test_waypoint_worker_without_postgres_says_what_it_needs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli import app

    monkeypatch.delenv("WAYPOINT_POSTGRES_URL", raising=False)
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["worker"])
    assert result.exit_code == 2 and "WAYPOINT_POSTGRES_URL" in result.output


@pytest.mark.slow
async def test_a_worker_stopped_with_sigterm_mid_job_puts_it_back_and_the_next_finishes_it(
    settings: Settings, pg_url: str, tmp_path: Path
) -> None:
    """SIGTERM (a deploy, a scale-down) with no grace left: the worker stops after its current batch, exits 0 and
    the job is queued again with its uploads; the next worker finishes it, skipping what was committed."""
    n = 1500
    settings = _queued_settings(settings, pg_url)
    lines = [
        json.dumps({"id": f"q{i:05d}", "title": f"Q{i}", "text": f"Quote {i} on topic {i * 3}."}) for i in range(n)
    ]
    data = tmp_path / "worker-data"
    async with _api(settings) as c:
        files = [("files", ("corpus.jsonl", "\n".join(lines).encode(), "application/jsonl"))]
        job = (await c.post("/v1/documents", files=files)).json()
        log1 = tmp_path / "w1.log"
        first = _start_worker(data, pg_url, log1, grace_s=0)
        try:
            deadline = time.monotonic() + 120
            while _committed(pg_url) < 64 and time.monotonic() < deadline and first.poll() is None:
                await asyncio.sleep(0.1)
        finally:
            rc = _stop(first, log1)
        stopped_at = _committed(pg_url)
        assert rc == 0 and 64 <= stopped_at < n, log1.read_text()[-3000:]  # stopped early, and cleanly
        assert "back on the queue" in log1.read_text()
        queued = (await c.get(f"/v1/jobs/{job['id']}")).json()
        assert queued["status"] == "queued" and queued["progress"]["documents_done"] == stopped_at
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT COUNT(*) FROM uploads").fetchone() == (1,)  # kept for the next worker
            assert conn.execute("SELECT COUNT(*) FROM documents WHERE pending_hash IS NOT NULL").fetchone() == (0,)
        second = _start_worker(data, pg_url, tmp_path / "w2.log")
        try:
            done = await _wait_job(c, job["id"], timeout=240)
        finally:
            assert _stop(second, tmp_path / "w2.log") == 0
    result = done["result"]
    assert result["skipped"] == stopped_at and result["documents"] == n - stopped_at and not result["errors"]
    assert _committed(pg_url) == n
    from knowledge.vector_store import open_vector_store

    store = open_vector_store(settings.model_copy(update={"data_dir": data}))
    try:
        assert store.count(settings.default_tenant) == n and store.count(settings.default_tenant, live=False) == 0
    finally:
        store.close()


async def test_a_retried_job_that_had_finished_is_not_run_again_and_its_uploads_go(pg_url: str) -> None:
    """A job stopped just after it finished comes back from the queue: it is left done, its uploads dropped."""
    from api.ingest_queue import _store_uploads, execute_job
    from api.pg_jobs import PgJobStore
    from knowledge.postgres import open_pool

    pool = open_pool(pg_url)
    jobs = PgJobStore(pool)
    try:
        job = jobs.create("default", ["a.md"])
        _store_uploads(pool, job.id, [("a.md", b"# A\ntext")])
        jobs.finish(job.id, result={"documents": 1})
        jobs.requeue(job.id, {"documents_done": 1})  # too late: a finished job stays finished
        docs = Docs()
        await execute_job(pool, jobs, docs, job.id, "default")
        assert docs.ingested == []
        got = jobs.get(job.id, tenant="default")
        assert got is not None and got.status == "done"
        with pool.connection() as conn:
            assert conn.execute("SELECT COUNT(*) FROM uploads").fetchone() == (0,)
    finally:
        pool.close()
