-- The document registry (knowledge.pg_manifest).
CREATE TABLE documents (
    tenant TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    content_hash TEXT,
    point_ids TEXT NOT NULL DEFAULT '[]',
    pending_hash TEXT,
    pending_point_ids TEXT NOT NULL DEFAULT '[]',
    chunks INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),
    PRIMARY KEY (tenant, doc_id)
);
