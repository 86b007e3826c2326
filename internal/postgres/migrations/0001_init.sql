-- chartctl schema, version 1: the records of internal/bolt as tables.
-- Names, versions and email keys use the "C" collation so that listings
-- sort bytewise, as the API promises and bolt does.

CREATE TABLE users (
    id            text PRIMARY KEY,
    email         text NOT NULL,
    email_key     text COLLATE "C" NOT NULL UNIQUE,
    password_hash text NOT NULL DEFAULT '',
    admin         boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id           text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL,
    scopes       text[] NOT NULL,
    hash         bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    expires_at   timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE organizations (
    id          text NOT NULL,
    name        text COLLATE "C" PRIMARY KEY,
    description text NOT NULL DEFAULT '',
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL
);
CREATE INDEX organizations_created_by ON organizations (created_by) WHERE created_by <> '';

CREATE TABLE repositories (
    id           text PRIMARY KEY,
    name         text COLLATE "C" NOT NULL UNIQUE,
    description  text NOT NULL DEFAULT '',
    organization text COLLATE "C" REFERENCES organizations (name),
    owner_id     text NOT NULL DEFAULT '',
    visibility   text NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE TABLE chart_versions (
    repository_id text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name          text COLLATE "C" NOT NULL,
    version       text COLLATE "C" NOT NULL,
    app_version   text NOT NULL DEFAULT '',
    description   text NOT NULL DEFAULT '',
    keywords      text[],
    digest        text NOT NULL,
    size          bigint NOT NULL,
    prov_digest   text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    -- metadata is Chart.yaml as JSON, kept as the bytes given.
    metadata      bytea,
    -- index_entry is the version's pre-rendered Helm index entry.
    index_entry   bytea,
    PRIMARY KEY (repository_id, name, version)
);

-- blob_refs counts the chart records referring to each blob (as archive or
-- provenance file); a digest is absent when nothing refers to it. Its rows
-- are the locks that make "is this blob an orphan now" exact under
-- concurrent writers.
CREATE TABLE blob_refs (
    digest text PRIMARY KEY,
    refs   bigint NOT NULL
);

CREATE TABLE teams (
    id           text PRIMARY KEY,
    name         text COLLATE "C" NOT NULL UNIQUE,
    organization text COLLATE "C" NOT NULL REFERENCES organizations (name),
    description  text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL
);
CREATE INDEX teams_organization ON teams (organization, name);

CREATE TABLE members (
    id        text PRIMARY KEY,
    team_id   text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    email     text NOT NULL,
    email_key text COLLATE "C" NOT NULL,
    role      text NOT NULL,
    added_at  timestamptz NOT NULL,
    CONSTRAINT members_team_email UNIQUE (team_id, email_key)
);
CREATE INDEX members_email ON members (email_key);

CREATE TABLE oauth_clients (
    id            text PRIMARY KEY,
    name          text NOT NULL DEFAULT '',
    redirect_uris text[] NOT NULL DEFAULT '{}',
    public        boolean NOT NULL DEFAULT false,
    secret_hash   bytea,
    created_at    timestamptz NOT NULL
);

CREATE TABLE oauth_codes (
    hash           bytea PRIMARY KEY,
    client_id      text NOT NULL,
    user_id        text NOT NULL,
    redirect_uri   text NOT NULL,
    scopes         text[] NOT NULL,
    code_challenge text NOT NULL DEFAULT '',
    grant_id       text NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    redeemed_at    timestamptz
);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

CREATE TABLE oauth_tokens (
    hash       bytea PRIMARY KEY,
    id         text NOT NULL UNIQUE,
    kind       text NOT NULL,
    grant_id   text NOT NULL,
    parent_id  text NOT NULL DEFAULT '',
    client_id  text NOT NULL,
    user_id    text NOT NULL,
    scopes     text[] NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    rotated_at timestamptz,
    revoked    boolean NOT NULL DEFAULT false
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);

-- A grant is a family of tokens, revoked as one; a revoked grant stays
-- recorded so that tokens issued for it later are born revoked.
CREATE TABLE oauth_grants (
    id         text PRIMARY KEY,
    revoked    boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
);

CREATE TABLE web_sessions (
    hash       bytea PRIMARY KEY,
    user_id    text NOT NULL,
    csrf_token text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
