-- chartctl schema, version 6: mirror repositories (issue #15), as bolt
-- schema 5. A repository with a mirror_url is a read-only mirror of that
-- upstream Helm repository; the other mirror columns are its settings and
-- sync state. Existing repositories stay ordinary ones (mirror_url NULL).

ALTER TABLE repositories
    ADD COLUMN mirror_url              text,
    ADD COLUMN mirror_interval_seconds bigint NOT NULL DEFAULT 0,
    ADD COLUMN mirror_username         text NOT NULL DEFAULT '',
    -- Sealed (AES-GCM) with the --secrets-key-file key by the server
    -- before it gets here; NULL when the upstream needs no password.
    ADD COLUMN mirror_password         bytea,
    ADD COLUMN mirror_status           text NOT NULL DEFAULT '',
    ADD COLUMN mirror_last_sync_at     timestamptz,
    ADD COLUMN mirror_last_attempt_at  timestamptz,
    ADD COLUMN mirror_error            text NOT NULL DEFAULT '';
