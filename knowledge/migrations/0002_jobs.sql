-- Ingest jobs (api.pg_jobs).
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION,
    files TEXT NOT NULL,
    result TEXT,
    error TEXT
);
