-- The registry keeps each document's committed and pending Document (JSON), so an ingest that reached the
-- graph and tree sinks can be undone by feeding them the committed version again (knowledge.manifest).
ALTER TABLE documents ADD COLUMN document TEXT;
ALTER TABLE documents ADD COLUMN pending_document TEXT;
