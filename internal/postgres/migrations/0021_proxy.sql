-- chartctl schema, version 17: proxy repositories (issue #31), a
-- pull-through cache of an upstream Helm repository or OCI registry path.
-- The settings are one JSON document (url, username, password (sealed with
-- the server's secrets key, base64), ttl_seconds, include, exclude), as in
-- bolt's repository record; NULL for every other repository, so existing
-- repositories stay what they are.
ALTER TABLE repositories ADD COLUMN proxy jsonb;
