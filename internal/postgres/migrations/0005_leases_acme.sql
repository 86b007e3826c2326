-- chartctl schema, version 5: leases, so that scheduled work (retention
-- runs, mirror syncs, ACME orders) runs on one replica at a time, and the
-- ACME cache shared by replicas (CONTRACT §14).

-- A lease has one holder until expires_at; the database's clock decides,
-- so replicas with skewed clocks still agree.
CREATE TABLE leases (
    name       text COLLATE "C" PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);

-- autocert's cache: the ACME account key, certificates with their private
-- keys and HTTP-01 tokens, each sealed with the --secrets-key-file key.
CREATE TABLE acme_cache (
    key        text COLLATE "C" PRIMARY KEY,
    data       bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
