-- chartctl schema: what each chart archive renders with its default
-- values (issue #33), keyed by the archive's digest and written by the
-- images job so a diff reads it instead of rendering. Derived data: not
-- in backups; the job renders the versions without a row again.
CREATE TABLE rendered_manifests (
    digest     text PRIMARY KEY,
    data       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
