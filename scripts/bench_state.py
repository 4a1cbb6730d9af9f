"""Run-store latency on SQLite and Postgres: one event append (what every streamed token costs the event loop)
and one replay poll (what a follower on another replica does every ``api.replay_poll_s``).

    WAYPOINT_POSTGRES_URL=postgresql://root@127.0.0.1:5432/bench .venv/bin/python scripts/bench_state.py --events 1000

Prints p50 / p95 in milliseconds per backend. The database must exist; the script writes one run per backend.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from pathlib import Path

from graphs.events import Envelope, Token
from graphs.tracing.pg_store import PgTraceStore
from graphs.tracing.run_store import RunStore
from graphs.tracing.store import TraceStore


def measure(store: RunStore, events: int) -> tuple[list[float], list[float]]:
    run_id = f"bench_{uuid.uuid4().hex}"
    store.start_run(run_id=run_id, tenant="bench", question="q")
    appends, polls = [], []
    for i in range(events):
        envelope = Envelope(run_id=run_id, seq=i, ts=time.time(), event=Token(text="x"))
        t = time.perf_counter()
        store.append(envelope)
        appends.append(time.perf_counter() - t)
        if i % 5 == 0:
            t = time.perf_counter()
            store.events(run_id, tenant="bench", after_seq=i - 5)
            polls.append(time.perf_counter() - t)
    store.purge(older_than=time.time() + 1)
    return sorted(appends), sorted(polls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000)
    args = parser.parse_args()
    stores: list[tuple[str, RunStore]] = [("sqlite", TraceStore.open(Path(tempfile.mkdtemp()) / "runs.sqlite"))]
    url = os.environ.get("WAYPOINT_POSTGRES_URL")
    if url:
        stores.append(("postgres", PgTraceStore.open(url)))
    for name, store in stores:
        appends, polls = measure(store, args.events)
        store.close()

        def ms(xs: list[float], q: float) -> float:
            return round(xs[int(q * (len(xs) - 1))] * 1e3, 2)

        print(
            f"{name}: append p50 {ms(appends, 0.5)} ms p95 {ms(appends, 0.95)} ms; "
            f"replay poll p50 {ms(polls, 0.5)} ms p95 {ms(polls, 0.95)} ms"
        )


if __name__ == "__main__":
    main()
