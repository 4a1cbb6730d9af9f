"""The run store on Postgres: the same contract as the SQLite ``TraceStore``, shared by API replicas.

Tables come from ``knowledge/migrations`` (``runs``, ``events``, ``owners``). Each method takes a
connection from the pool for one statement or one transaction, so any replica sees every other
replica's runs and events as soon as they are written.
"""

from __future__ import annotations

import json
import time
from typing import Any

from graphs.events import Answer, Done, Envelope, run_event_adapter
from graphs.tracing.store import RunRecord, TraceStoreError, interrupted_events
from knowledge.owners import Owner, owner_dead

_COLUMNS = "id, tenant, thread_id, question, status, started_at, ended_at, answer, citations, totals, last_seq"


class PgTraceStore:
    """Postgres-backed, tenant-scoped store of runs and their events."""

    def __init__(self, pool: Any, *, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool

    @classmethod
    def open(cls, url: str) -> PgTraceStore:
        """Connect to ``url`` and migrate the schema to the latest version."""
        from knowledge.postgres import open_pool

        return cls(open_pool(url), owns_pool=True)

    def close(self) -> None:
        """Close the pool when this store opened it."""
        if self._owns_pool:
            self._pool.close()

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
        """Register a run before its first event; raises ``TraceStoreError`` when the id is taken."""
        from psycopg import errors

        ts = time.time() if started_at is None else started_at
        try:
            with self._pool.connection() as conn:
                conn.execute(
                    "INSERT INTO runs (id, tenant, thread_id, question, status, started_at, owner) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (run_id, tenant, thread_id, question, "running", ts, owner),
                )
        except errors.UniqueViolation as exc:
            raise TraceStoreError(f"run {run_id!r} already exists") from exc
        return RunRecord(
            id=run_id, tenant=tenant, thread_id=thread_id, question=question, status="running", started_at=ts
        )

    def append(self, envelope: Envelope) -> None:
        """Store one event; an ``answer`` or ``done`` event also updates the run row."""
        from psycopg import errors

        event = envelope.event
        try:
            with self._pool.connection() as conn, conn.transaction():
                if not isinstance(event, (Answer, Done)):
                    # a token or step event: do not wait for the WAL flush (a Postgres crash may lose the last
                    # fraction of a second of them; never a run's answer or its end, nor another table's rows)
                    conn.execute("SET LOCAL synchronous_commit TO OFF")
                cur = conn.execute(
                    "UPDATE runs SET last_seq = GREATEST(last_seq, %s) WHERE id = %s", (envelope.seq, envelope.run_id)
                )
                if cur.rowcount == 0:
                    raise TraceStoreError(f"unknown run {envelope.run_id!r}: call start_run first")
                conn.execute(
                    "INSERT INTO events (run_id, seq, ts, kind, json) VALUES (%s, %s, %s, %s, %s)",
                    (envelope.run_id, envelope.seq, envelope.ts, event.kind, event.model_dump_json()),
                )
                if isinstance(event, Answer):
                    citations = json.dumps([c.model_dump(mode="json") for c in event.citations])
                    conn.execute(
                        "UPDATE runs SET answer = %s, citations = %s WHERE id = %s",
                        (event.text, citations, envelope.run_id),
                    )
                elif isinstance(event, Done):
                    conn.execute(
                        "UPDATE runs SET status = %s, ended_at = %s, totals = %s WHERE id = %s",
                        (event.status, envelope.ts, json.dumps(event.totals, default=str), envelope.run_id),
                    )
        except errors.UniqueViolation as exc:
            raise TraceStoreError(f"run {envelope.run_id!r} already has event seq {envelope.seq}") from exc

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._pool.connection() as conn:
            return list(conn.execute(sql, params).fetchall())

    def get_run(self, run_id: str, *, tenant: str) -> RunRecord | None:
        """The run, or None when it does not exist or belongs to another tenant."""
        rows = self._rows(f"SELECT {_COLUMNS} FROM runs WHERE id = %s AND tenant = %s", (run_id, tenant))
        return _record(rows[0]) if rows else None

    def events(self, run_id: str, *, tenant: str, after_seq: int = -1) -> list[Envelope]:
        """The run's events with ``seq > after_seq``, in order (empty for another tenant's run)."""
        rows = self._rows(
            "SELECT e.seq, e.ts, e.json FROM events e JOIN runs r ON r.id = e.run_id "
            "WHERE e.run_id = %s AND r.tenant = %s AND e.seq > %s ORDER BY e.seq",
            (run_id, tenant, after_seq),
        )
        return [
            Envelope(run_id=run_id, seq=seq, ts=ts, event=run_event_adapter.validate_json(payload))
            for seq, ts, payload in rows
        ]

    def thread_runs(self, thread_id: str, *, tenant: str) -> list[RunRecord]:
        """The runs (turns) of a thread, oldest first; empty for an unknown or another tenant's thread."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM runs WHERE thread_id = %s AND tenant = %s ORDER BY started_at, ord",
            (thread_id, tenant),
        )
        return [_record(r) for r in rows]

    def thread_exists(self, thread_id: str, *, tenant: str) -> bool:
        """True when the tenant has at least one run on this thread."""
        rows = self._rows("SELECT 1 FROM runs WHERE thread_id = %s AND tenant = %s LIMIT 1", (thread_id, tenant))
        return bool(rows)

    def event_count(self, run_id: str, *, tenant: str) -> int:
        """How many events the run has stored (0 for an unknown or another tenant's run)."""
        rows = self._rows(
            "SELECT COUNT(*) FROM events e JOIN runs r ON r.id = e.run_id WHERE e.run_id = %s AND r.tenant = %s",
            (run_id, tenant),
        )
        return int(rows[0][0])

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
        """The tenant's runs, newest first, filtered; ``before`` is the (started_at, id) of the previous page's last."""
        where: list[str] = ["tenant = %s"]
        args: list[Any] = [tenant]
        for clause, value in (
            ("thread_id = %s", thread_id),
            ("status = %s", status),
            ("started_at >= %s", since),
            ("started_at < %s", until),
        ):
            if value is not None:
                where.append(clause)
                args.append(value)
        if before is not None:
            where.append("(started_at < %s OR (started_at = %s AND id < %s))")
            args += [before[0], before[0], before[1]]
        sql = f"SELECT {_COLUMNS} FROM runs WHERE {' AND '.join(where)} ORDER BY started_at DESC, id DESC LIMIT %s"
        return [_record(r) for r in self._rows(sql, (*args, limit))]

    def usage_by_run(self, run_ids: list[str], *, tenant: str) -> dict[str, dict[str, int]]:
        """LLM calls and prompt / cached / completion tokens summed over each run's ``usage`` events so far."""
        if not run_ids:
            return {}
        rows = self._rows(
            "SELECT e.run_id, COUNT(*), SUM((e.json::jsonb ->> 'prompt_tokens')::bigint), "
            "SUM((e.json::jsonb ->> 'cached_tokens')::bigint), SUM((e.json::jsonb ->> 'completion_tokens')::bigint) "
            "FROM events e JOIN runs r ON r.id = e.run_id WHERE r.tenant = %s AND e.kind = 'usage' "
            "AND e.run_id = ANY(%s) GROUP BY e.run_id",
            (tenant, list(run_ids)),
        )
        keys = ("llm_calls", "prompt_tokens", "cached_tokens", "completion_tokens")
        return {row[0]: dict(zip(keys, (int(v or 0) for v in row[1:]), strict=True)) for row in rows}

    def purge(self, *, older_than: float) -> int:
        """Delete runs (and their events) whose last activity is before ``older_than``; returns how many."""
        last = "COALESCE(ended_at, (SELECT MAX(ts) FROM events WHERE run_id = runs.id), started_at)"
        with self._pool.connection() as conn, conn.transaction():
            cur = conn.execute(f"DELETE FROM runs WHERE {last} < %s", (older_than,))  # events cascade
            return int(cur.rowcount)

    # ---- owners: interrupted runs after a crash, cancellation requests ----

    def heartbeat(self, owner: Owner) -> None:
        """Record that ``owner`` is alive now (registers it on first call)."""
        with self._pool.connection() as conn:
            conn.execute(
                "INSERT INTO owners (id, host, pid, started_at, heartbeat_at) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
                (owner.id, owner.host, owner.pid, owner.started_at, time.time()),
            )

    def interrupt_dead(self, me: Owner, *, lease_s: float) -> list[str]:
        """Close out the running runs of dead owners (``error`` + ``done(interrupted)``); their ids.

        Rows are locked (``SKIP LOCKED``) so replicas sweeping at once never close out a run twice.
        """
        now = time.time()
        done: list[str] = []
        with self._pool.connection() as conn, conn.transaction():
            rows = conn.execute(
                "SELECT r.id, r.last_seq, r.owner, o.host, o.pid, o.heartbeat_at FROM runs r "
                "LEFT JOIN owners o ON o.id = r.owner WHERE r.status = 'running' FOR UPDATE OF r SKIP LOCKED"
            ).fetchall()
            for run_id, last_seq, owner_id, host, pid, beat in rows:
                if not owner_dead(owner_id, host, pid, beat, me=me, lease_s=lease_s, now=now):
                    continue
                for envelope in interrupted_events(run_id, last_seq, now):
                    conn.execute(
                        "INSERT INTO events (run_id, seq, ts, kind, json) VALUES (%s, %s, %s, %s, %s)",
                        (run_id, envelope.seq, envelope.ts, envelope.event.kind, envelope.event.model_dump_json()),
                    )
                conn.execute(
                    "UPDATE runs SET status = 'interrupted', ended_at = %s, last_seq = %s WHERE id = %s",
                    (now, last_seq + 2, run_id),
                )
                done.append(run_id)
            conn.execute(
                "DELETE FROM owners o WHERE o.heartbeat_at < %s AND NOT EXISTS "
                "(SELECT 1 FROM runs r WHERE r.owner = o.id AND r.status = 'running') "
                "AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.owner = o.id AND j.status IN ('queued', 'running'))",
                (now - max(lease_s, 1.0) * 10,),
            )
        return done

    def request_cancel(self, run_id: str, *, tenant: str) -> bool:
        """Ask the run's owner to cancel it; False when the run is unknown or not running."""
        with self._pool.connection() as conn:
            cur = conn.execute(
                "UPDATE runs SET cancel_requested = TRUE WHERE id = %s AND tenant = %s AND status = 'running'",
                (run_id, tenant),
            )
            return bool(cur.rowcount)

    def cancel_requests(self, owner: Owner) -> list[str]:
        """Running runs of ``owner`` whose cancellation was asked for."""
        rows = self._rows(
            "SELECT id FROM runs WHERE owner = %s AND status = 'running' AND cancel_requested", (owner.id,)
        )
        return [r[0] for r in rows]


def _record(row: tuple[Any, ...]) -> RunRecord:
    data = dict(zip(_COLUMNS.split(", "), row, strict=True))
    data["citations"] = json.loads(data["citations"])
    data["totals"] = json.loads(data["totals"])
    return RunRecord.model_validate(data)
