-- Which server process owns a running run or job, and when it last said it was alive; cancel requests.
CREATE TABLE owners (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    heartbeat_at DOUBLE PRECISION NOT NULL
);
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE runs ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX runs_running ON runs (owner) WHERE status = 'running';
ALTER TABLE jobs ADD COLUMN owner TEXT;
