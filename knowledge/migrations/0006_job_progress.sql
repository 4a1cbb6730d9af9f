-- Documents processed so far by a running job (JSON), shown by GET /v1/jobs/{id} on every replica.
ALTER TABLE jobs ADD COLUMN progress TEXT;
