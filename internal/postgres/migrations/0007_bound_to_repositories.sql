-- chartctl schema, version 7: repository webhooks and OCI upload sessions
-- are bound to their repository's ID and go with it (CONTRACT §18
-- decision 2, issue #27), as bolt schema 6. Until now they named their
-- repository only, so a repository deleted and created again by someone
-- else handed its webhooks (and their events) to the new owner.

-- A repository webhook's repository; NULL for organization and
-- server-wide webhooks. Deleting the repository deletes its webhooks and,
-- through deliveries' own cascade, their deliveries.
ALTER TABLE webhooks ADD COLUMN repository_id text REFERENCES repositories (id) ON DELETE CASCADE;
UPDATE webhooks w SET repository_id = r.id FROM repositories r WHERE w.repository <> '' AND r.name = w.repository;
-- Webhooks whose repository is gone were left behind by the bug.
DELETE FROM webhooks WHERE repository <> '' AND repository_id IS NULL;
ALTER TABLE webhooks ADD CONSTRAINT webhooks_repository_bound CHECK ((repository = '') = (repository_id IS NULL));
CREATE INDEX webhooks_repository_id ON webhooks (repository_id) WHERE repository_id IS NOT NULL;

-- The repository an upload session's name belongs to when it started.
-- No foreign key: a session's record may be written (closed) after its
-- repository is gone; DeleteRepository deletes the repository's sessions
-- and the registry refuses a session whose repository ID is not the
-- current one.
ALTER TABLE oci_uploads ADD COLUMN repository_id text;
UPDATE oci_uploads u SET repository_id = r.id FROM repositories r WHERE r.name = split_part(u.name, '/', 1);
DELETE FROM oci_uploads WHERE repository_id IS NULL;
CREATE INDEX oci_uploads_repository_id ON oci_uploads (repository_id);

-- Quotas and usage counters of repository names no repository holds.
DELETE FROM quotas q WHERE q.scope = 'repository' AND NOT EXISTS (SELECT 1 FROM repositories r WHERE r.name = q.name);
DELETE FROM usage u WHERE u.scope = 'repository' AND NOT EXISTS (SELECT 1 FROM repositories r WHERE r.name = u.name);
