-- Uploaded files waiting for an ingest worker (api.ingest_queue); deleted when the job ends.
CREATE TABLE uploads (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (job_id, idx)
);
