-- Runs and their events (graphs.pg_trace_store).
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    ord BIGSERIAL NOT NULL,
    tenant TEXT NOT NULL,
    thread_id TEXT,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION,
    answer TEXT,
    citations TEXT NOT NULL DEFAULT '[]',
    totals TEXT NOT NULL DEFAULT '{}',
    last_seq INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX runs_by_thread ON runs (tenant, thread_id, started_at);
CREATE INDEX runs_by_tenant ON runs (tenant, started_at DESC, id DESC);
CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    ts DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
