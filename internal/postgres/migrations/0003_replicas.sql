-- chartctl schema, version 3: what replicas share beyond the records.

-- A generation number per repository, raised by every committed change of
-- its chart versions, so that each replica can tell whether its in-memory
-- Helm index is current (see watch.go).
ALTER TABLE repositories ADD COLUMN generation bigint NOT NULL DEFAULT 0;

-- Rate limit windows (fixed windows, as internal/ratelimit keeps them in
-- memory on one node): used requests of a key in a bucket until reset_at.
-- One row per bucket and key, updated in place, so N concurrent requests
-- on any replicas against a budget of k admit exactly k.
CREATE TABLE rate_windows (
    bucket   text COLLATE "C" NOT NULL,
    key      text COLLATE "C" NOT NULL,
    used     integer NOT NULL,
    reset_at timestamptz NOT NULL,
    PRIMARY KEY (bucket, key)
);
CREATE INDEX rate_windows_reset ON rate_windows (reset_at);
