"""The run store: every run and every run event, in SQLite, written as the run goes.

Two tables. ``runs`` has one row per run, created before the first event, so a run that is
still going (or whose process crashed) is visible with ``status = 'running'``:

    id, tenant, thread_id, question, status, started_at, ended_at,
    answer, citations (JSON list), totals (JSON object), last_seq

``events`` has one row per ``Envelope``, keyed by ``(run_id, seq)``:

    run_id, seq, ts, kind, json (the envelope's ``event`` as JSON)

Schema version 2 (``PRAGMA user_version``) adds ``runs.owner`` / ``runs.cancel_requested`` and an
``owners`` table (id, host, pid, started_at, heartbeat_at): a version-1 file is upgraded on open.

Every read takes the tenant and only sees that tenant's rows. Writes are small and synchronous
(WAL mode, one connection behind a lock); call them from the event loop or a worker thread alike.
The trace viewer builds spans from ``events`` (``step_started``/``step_finished`` pairs, ``usage``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphs.events import Answer, Citation, Done, Envelope, RunError, run_event_adapter
from knowledge.owners import Owner, owner_dead

RunStatus = Literal["running", "ok", "not_found", "budget", "error", "cancelled", "interrupted"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    thread_id TEXT,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    answer TEXT,
    citations TEXT NOT NULL DEFAULT '[]',
    totals TEXT NOT NULL DEFAULT '{}',
    last_seq INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (tenant, thread_id, started_at);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""


_SCHEMA_V2 = """
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS owners (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL
);
"""
SCHEMA_VERSION = 2
"""``PRAGMA user_version`` of an up-to-date run store file."""

INTERRUPTED_MESSAGE = "the server process running this run stopped before it finished"
"""The ``error`` event written into a run whose owner died."""


def interrupted_events(run_id: str, last_seq: int, now: float) -> list[Envelope]:
    """The ``error`` + ``done(interrupted)`` pair that closes out a run whose owner died."""
    error = RunError(message=INTERRUPTED_MESSAGE, error_type="Interrupted", recoverable=False)
    return [
        Envelope(run_id=run_id, seq=last_seq + 1, ts=now, event=error),
        Envelope(run_id=run_id, seq=last_seq + 2, ts=now, event=Done(status="interrupted")),
    ]


class TraceStoreError(Exception):
    """The store was used wrongly: an unknown run, a duplicate run id or event sequence number."""


class RunRecord(BaseModel):
    """One run as stored: who asked what, how it ended, what it cost."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Run id."""
    tenant: str
    """Owning tenant."""
    thread_id: str | None
    """Conversation thread the run belongs to."""
    question: str
    """The user's message."""
    status: RunStatus
    """``running`` until a ``done`` event is stored, then the done status."""
    started_at: float
    """Unix time the run was registered."""
    ended_at: float | None = None
    """Unix time of the ``done`` event."""
    answer: str | None = None
    """Text of the ``answer`` event, once there is one."""
    citations: list[Citation] = Field(default_factory=list)
    """Citations of the ``answer`` event."""
    totals: dict[str, Any] = Field(default_factory=dict)
    """Totals of the ``done`` event (steps, LLM calls, tokens, wall time)."""
    last_seq: int = -1
    """Highest stored event sequence number (-1: no event yet)."""


class TraceStore:
    """SQLite-backed, tenant-scoped store of runs and their events."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | str) -> TraceStore:
        """Open (and create if needed) the store at ``path``; ``":memory:"`` for a throwaway one."""
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        _upgrade(conn)
        return cls(conn)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

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
        ts = time.time() if started_at is None else started_at
        try:
            with self._lock:
                self._conn.execute(
                    "INSERT INTO runs (id, tenant, thread_id, question, status, started_at, owner) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (run_id, tenant, thread_id, question, "running", ts, owner),
                )
        except sqlite3.IntegrityError as exc:
            raise TraceStoreError(f"run {run_id!r} already exists") from exc
        return RunRecord(
            id=run_id, tenant=tenant, thread_id=thread_id, question=question, status="running", started_at=ts
        )

    def append(self, envelope: Envelope) -> None:
        """Store one event; an ``answer`` or ``done`` event also updates the run row."""
        event = envelope.event
        payload = event.model_dump_json()
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute(
                    "INSERT INTO events (run_id, seq, ts, kind, json) VALUES (?, ?, ?, ?, ?)",
                    (envelope.run_id, envelope.seq, envelope.ts, event.kind, payload),
                )
            except sqlite3.IntegrityError as exc:
                raise TraceStoreError(f"run {envelope.run_id!r} already has event seq {envelope.seq}") from exc
            cur = self._conn.execute(
                "UPDATE runs SET last_seq = MAX(last_seq, ?) WHERE id = ?", (envelope.seq, envelope.run_id)
            )
            if cur.rowcount == 0:
                raise TraceStoreError(f"unknown run {envelope.run_id!r}: call start_run first")
            self._apply(envelope.run_id, envelope.ts, event)

    def _apply(self, run_id: str, ts: float, event: object) -> None:
        if isinstance(event, Answer):
            citations = json.dumps([c.model_dump(mode="json") for c in event.citations])
            self._conn.execute(
                "UPDATE runs SET answer = ?, citations = ? WHERE id = ?", (event.text, citations, run_id)
            )
        elif isinstance(event, Done):
            self._conn.execute(
                "UPDATE runs SET status = ?, ended_at = ?, totals = ? WHERE id = ?",
                (event.status, ts, json.dumps(event.totals, default=str), run_id),
            )

    def get_run(self, run_id: str, *, tenant: str) -> RunRecord | None:
        """The run, or None when it does not exist or belongs to another tenant."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE id = ? AND tenant = ?", (run_id, tenant)
            ).fetchone()
        return _record(row) if row else None

    def events(self, run_id: str, *, tenant: str, after_seq: int = -1) -> list[Envelope]:
        """The run's events with ``seq > after_seq``, in order (empty for another tenant's run)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT e.seq, e.ts, e.json FROM events e JOIN runs r ON r.id = e.run_id "
                "WHERE e.run_id = ? AND r.tenant = ? AND e.seq > ? ORDER BY e.seq",
                (run_id, tenant, after_seq),
            ).fetchall()
        return [
            Envelope(run_id=run_id, seq=seq, ts=ts, event=run_event_adapter.validate_json(payload))
            for seq, ts, payload in rows
        ]

    def thread_runs(self, thread_id: str, *, tenant: str) -> list[RunRecord]:
        """The runs (turns) of a thread, oldest first; empty for an unknown or another tenant's thread."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE thread_id = ? AND tenant = ? ORDER BY started_at, rowid",
                (thread_id, tenant),
            ).fetchall()
        return [_record(r) for r in rows]

    def thread_exists(self, thread_id: str, *, tenant: str) -> bool:
        """True when the tenant has at least one run on this thread."""
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM runs WHERE thread_id = ? AND tenant = ? LIMIT 1", (thread_id, tenant)
            ).fetchone()
        return row is not None

    def event_count(self, run_id: str, *, tenant: str) -> int:
        """How many events the run has stored (0 for an unknown or another tenant's run)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*) FROM events e JOIN runs r ON r.id = e.run_id WHERE e.run_id = ? AND r.tenant = ?",
                (run_id, tenant),
            ).fetchone()
        return int(row[0])

    # ---- trace viewer (issue 9): listing with filters and keyset pagination, usage per run, retention ----

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
        where: list[str] = ["tenant = ?"]
        args: list[Any] = [tenant]
        for clause, value in (
            ("thread_id = ?", thread_id),
            ("status = ?", status),
            ("started_at >= ?", since),
            ("started_at < ?", until),
        ):
            if value is not None:
                where.append(clause)
                args.append(value)
        if before is not None:
            where.append("(started_at < ? OR (started_at = ? AND id < ?))")
            args += [before[0], before[0], before[1]]
        sql = f"SELECT {_COLUMNS} FROM runs WHERE {' AND '.join(where)} ORDER BY started_at DESC, id DESC LIMIT ?"
        with self._lock:
            rows = self._conn.execute(sql, (*args, limit)).fetchall()
        return [_record(r) for r in rows]

    def usage_by_run(self, run_ids: list[str], *, tenant: str) -> dict[str, dict[str, int]]:
        """LLM calls and prompt / cached / completion tokens summed over each run's ``usage`` events so far."""
        if not run_ids:
            return {}
        marks = ", ".join("?" for _ in run_ids)
        sql = (
            "SELECT e.run_id, COUNT(*), SUM(json_extract(e.json, '$.prompt_tokens')), "
            "SUM(json_extract(e.json, '$.cached_tokens')), SUM(json_extract(e.json, '$.completion_tokens')) "
            f"FROM events e JOIN runs r ON r.id = e.run_id WHERE r.tenant = ? AND e.kind = 'usage' "
            f"AND e.run_id IN ({marks}) GROUP BY e.run_id"
        )
        with self._lock:
            rows = self._conn.execute(sql, (tenant, *run_ids)).fetchall()
        keys = ("llm_calls", "prompt_tokens", "cached_tokens", "completion_tokens")
        return {row[0]: dict(zip(keys, (int(v or 0) for v in row[1:]), strict=True)) for row in rows}

    def purge(self, *, older_than: float) -> int:
        """Delete runs (and their events) whose last activity is before ``older_than``; returns how many."""
        last = "COALESCE(ended_at, (SELECT MAX(ts) FROM events WHERE run_id = runs.id), started_at)"
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            ids = [r[0] for r in self._conn.execute(f"SELECT id FROM runs WHERE {last} < ?", (older_than,))]
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ", ".join("?" for _ in chunk)
                self._conn.execute(f"DELETE FROM events WHERE run_id IN ({marks})", chunk)
                self._conn.execute(f"DELETE FROM runs WHERE id IN ({marks})", chunk)
        return len(ids)

    # ---- end of the trace viewer block ----

    # ---- owners: interrupted runs after a crash, cancellation requests ----

    def heartbeat(self, owner: Owner) -> None:
        """Record that ``owner`` is alive now (registers it on first call)."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO owners (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
                (owner.id, owner.host, owner.pid, owner.started_at, time.time()),
            )

    def interrupt_dead(self, me: Owner, *, lease_s: float) -> list[str]:
        """Close out the running runs of dead owners (``error`` + ``done(interrupted)``); their ids."""
        now = time.time()
        done: list[str] = []
        with self._lock, self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            rows = self._conn.execute(
                "SELECT r.id, r.last_seq, r.owner, o.host, o.pid, o.heartbeat_at FROM runs r "
                "LEFT JOIN owners o ON o.id = r.owner WHERE r.status = 'running'"
            ).fetchall()
            for run_id, last_seq, owner_id, host, pid, beat in rows:
                if not owner_dead(owner_id, host, pid, beat, me=me, lease_s=lease_s, now=now):
                    continue
                for envelope in interrupted_events(run_id, last_seq, now):
                    self._conn.execute(
                        "INSERT INTO events (run_id, seq, ts, kind, json) VALUES (?, ?, ?, ?, ?)",
                        (run_id, envelope.seq, envelope.ts, envelope.event.kind, envelope.event.model_dump_json()),
                    )
                self._conn.execute(
                    "UPDATE runs SET status = 'interrupted', ended_at = ?, last_seq = ? WHERE id = ?",
                    (now, last_seq + 2, run_id),
                )
                done.append(run_id)
            self._conn.execute(
                "DELETE FROM owners WHERE heartbeat_at < ? AND id NOT IN "
                "(SELECT owner FROM runs WHERE status = 'running' AND owner IS NOT NULL)",
                (now - max(lease_s, 1.0) * 10,),
            )
        return done

    def request_cancel(self, run_id: str, *, tenant: str) -> bool:
        """Ask the run's owner to cancel it; False when the run is unknown or not running."""
        with self._lock:
            cur = self._conn.execute(
                "UPDATE runs SET cancel_requested = 1 WHERE id = ? AND tenant = ? AND status = 'running'",
                (run_id, tenant),
            )
        return cur.rowcount > 0

    def cancel_requests(self, owner: Owner) -> list[str]:
        """Running runs of ``owner`` whose cancellation was asked for."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id FROM runs WHERE owner = ? AND status = 'running' AND cancel_requested = 1", (owner.id,)
            ).fetchall()
        return [r[0] for r in rows]


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring a file of an older schema version up to ``SCHEMA_VERSION`` (rows kept)."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    if version < 2 and "owner" not in columns:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA_V2.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
    elif version < SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


_COLUMNS = "id, tenant, thread_id, question, status, started_at, ended_at, answer, citations, totals, last_seq"


def _record(row: tuple[Any, ...]) -> RunRecord:
    keys = _COLUMNS.split(", ")
    data = dict(zip(keys, row, strict=True))
    data["citations"] = json.loads(data["citations"])
    data["totals"] = json.loads(data["totals"])
    return RunRecord.model_validate(data)
