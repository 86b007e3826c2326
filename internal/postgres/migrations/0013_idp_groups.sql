-- chartctl schema, version 11: identity provider groups (issue #28).
-- Teams bound to IdP groups (names or ids; empty: unbound), the groups
-- of a user's last IdP sign-in (re-applied when an OAuth grant is
-- refreshed), SCIM clients' bearer tokens (hashed) and the groups a SCIM
-- client pushes, with their members by user ID.
ALTER TABLE teams ADD COLUMN idp_groups text[] NOT NULL DEFAULT '{}';
ALTER TABLE users ADD COLUMN idp_groups text[] NOT NULL DEFAULT '{}';

CREATE TABLE scim_tokens (
    id           text COLLATE "C" PRIMARY KEY,
    name         text NOT NULL DEFAULT '',
    hash         bytea NOT NULL UNIQUE,
    created_by   text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz
);

CREATE TABLE scim_groups (
    id           text COLLATE "C" PRIMARY KEY,
    display_name text COLLATE "C" NOT NULL UNIQUE,
    external_id  text NOT NULL DEFAULT '',
    members      text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
