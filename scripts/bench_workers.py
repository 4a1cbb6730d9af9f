"""Ingest throughput through the durable queue with 1, 2 and 4 ``waypoint worker`` processes.

    WAYPOINT_POSTGRES_URL=postgresql://root@127.0.0.1:5432/bench WAYPOINT_QDRANT_URL=http://qdrant:6333 \\
        .venv/bin/python scripts/bench_workers.py --passages 10000 --workers 1 2 4

For each worker count: a fresh tenant, the corpus split into ``--jobs`` upload jobs of equal size queued at once
(one job is one worker's work, so the jobs are what spreads over workers), N worker processes started
(``--no-graph``: the embedded FalkorDB is one per data dir, so it cannot be shared by workers), wall time from
the first job queued (all workers ready) to the last one done; passages / s. More than one worker needs a Qdrant server
(``WAYPOINT_QDRANT_URL``): Qdrant local mode locks its folder. Writes ``docs/bench/workers.{json,md}``
(``--out``). The figure only means something on a quiet machine with the embedder's threads to itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def corpus(n: int, seed: int) -> list[str]:
    """``n`` distinct short passages."""
    return [
        json.dumps({"id": f"b{seed}-{i:06d}", "title": f"Item {i}", "text": f"Item {i} weighs {i * 7 % 997} grams."})
        for i in range(n)
    ]


async def queue_jobs(url: str, tenant: str, lines: list[str], jobs: int) -> list[str]:
    from api.ingest_queue import IngestQueue
    from api.pg_jobs import PgJobStore
    from knowledge.postgres import open_pool

    pool = open_pool(url)
    store = PgJobStore(pool)
    queue = IngestQueue(url, pool)
    await queue.open()
    ids = []
    size = -(-len(lines) // jobs)
    for j in range(jobs):
        part = lines[j * size : (j + 1) * size]
        if not part:
            break
        job = store.create(tenant, [f"part{j}.jsonl"])
        await queue.submit(job.id, tenant, [(f"part{j}.jsonl", "\n".join(part).encode())])
        ids.append(job.id)
    await queue.close()
    pool.close()
    return ids


def wait_jobs(url: str, ids: list[str], timeout_s: float) -> dict[str, Any]:
    import psycopg

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT status, result FROM jobs WHERE id = ANY(%s)", (ids,)).fetchall()
        if all(status in ("done", "failed") for status, _ in rows):
            results = [json.loads(r) for s, r in rows if r]
            return {
                "failed": sum(s == "failed" for s, _ in rows),
                "documents": sum(r["documents"] for r in results),
                "errors": sum(len(r["errors"]) for r in results),
            }
        time.sleep(0.2)
    raise TimeoutError(f"jobs not done after {timeout_s} s")


def start_workers(n: int, url: str, root: Path) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "WAYPOINT_POSTGRES_URL": url, "PYTHONPATH": str(REPO)}
    code = "import sys; from cli import main; sys.argv = ['waypoint', 'worker', '--no-graph']; main()"
    procs = []
    for i in range(n):
        data = root / f"worker{i}" if os.environ.get("WAYPOINT_QDRANT_URL") else root / "shared"
        log = (root / f"worker{i}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", code], env={**env, "WAYPOINT_DATA_DIR": str(data)}, stdout=log, stderr=log
            )
        )
    return procs


def wait_ready(url: str, n: int, timeout_s: float = 300) -> None:
    """Until ``n`` workers send heartbeats (model loaded, queue connected): start-up is not ingest time."""
    import psycopg

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(url) as conn:
                row = conn.execute(
                    "SELECT COUNT(*) FROM procrastinate_workers WHERE last_heartbeat > NOW() - INTERVAL '5 seconds'"
                ).fetchone()
            if row and row[0] >= n:
                return
        except psycopg.errors.UndefinedTable:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{n} workers not ready after {timeout_s} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--timeout-s", type=float, default=3600)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "workers")
    args = parser.parse_args()
    url = os.environ.get("WAYPOINT_POSTGRES_URL")
    if not url:
        sys.exit("set WAYPOINT_POSTGRES_URL")
    if max(args.workers) > 1 and not os.environ.get("WAYPOINT_QDRANT_URL"):
        sys.exit("more than one worker needs WAYPOINT_QDRANT_URL (the embedded engines lock their folder)")
    rows = []
    for n in args.workers:
        tenant = f"bench-{n}w-{int(time.time())}"
        with tempfile.TemporaryDirectory(prefix="waypoint-bench-") as tmp:
            procs = start_workers(n, url, Path(tmp))
            try:
                wait_ready(url, n)
                t0 = time.monotonic()
                ids = asyncio.run(queue_jobs(url, tenant, corpus(args.passages, n), args.jobs))
                outcome = wait_jobs(url, ids, args.timeout_s)
                wall = time.monotonic() - t0
            finally:
                for p in procs:
                    p.terminate()
                for p in procs:
                    p.wait(timeout=60)
        row = {"workers": n, "passages": args.passages, "jobs": len(ids), "wall_s": round(wall, 2), **outcome}
        row["passages_per_s"] = round(outcome["documents"] / wall, 1)
        print(json.dumps(row))
        rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    embedded = os.environ.get("WAYPOINT_QDRANT_ENGINE", "edge")
    machine = {"cpus": os.cpu_count(), "qdrant": "server" if os.environ.get("WAYPOINT_QDRANT_URL") else embedded}
    args.out.with_suffix(".json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")
    lines = ["| workers | passages | jobs | wall s | passages/s | failed jobs |", "|---|---|---|---|---|---|"]
    lines += [
        f"| {r['workers']} | {r['documents']} | {r['jobs']} | {r['wall_s']} | {r['passages_per_s']} | {r['failed']} |"
        for r in rows
    ]
    args.out.with_suffix(".md").write_text(
        "# Ingest throughput through the queue\n\n" + "\n".join(lines) + f"\n\nMachine: {machine}\n"
    )


if __name__ == "__main__":
    main()
