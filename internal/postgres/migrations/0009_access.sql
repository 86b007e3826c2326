-- chartctl schema, version 9: access for machines and per repository
-- (issue #29): repository grants, robot accounts, trusted publishers, the
-- credentials exchanged for their OIDC tokens, the token IDs already
-- exchanged, repository-restricted API keys and reserved names of
-- deleted organizations. Everything is bound to IDs and goes with them
-- (CONTRACT §18 decision 2).

-- The robot (ORG/NAME) and trusted publisher an audit entry's actor
-- acted through.
ALTER TABLE audit_log ADD COLUMN actor_robot text NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN actor_publisher text NOT NULL DEFAULT '';

-- Repository patterns an API key is restricted to; NULL: unrestricted.
ALTER TABLE api_keys ADD COLUMN repositories text[];

-- Robots belong to an organization by its ID.
ALTER TABLE organizations ADD CONSTRAINT organizations_id_key UNIQUE (id);

-- A team's or a user's role on one repository. subject_id is the team's
-- or the user's ID; exactly one of team_id and user_id repeats it, so
-- the grant goes with its team or user.
CREATE TABLE repository_grants (
    id            text COLLATE "C" PRIMARY KEY,
    repository_id text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    kind          text NOT NULL,
    subject_id    text COLLATE "C" NOT NULL,
    team_id       text REFERENCES teams (id) ON DELETE CASCADE,
    user_id       text REFERENCES users (id) ON DELETE CASCADE,
    role          text NOT NULL,
    created_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    CONSTRAINT repository_grants_subject UNIQUE (repository_id, kind, subject_id),
    CONSTRAINT repository_grants_bound CHECK (
        (kind = 'team' AND team_id = subject_id AND user_id IS NULL) OR
        (kind = 'user' AND user_id = subject_id AND team_id IS NULL))
);
CREATE INDEX repository_grants_team ON repository_grants (team_id) WHERE team_id IS NOT NULL;
CREATE INDEX repository_grants_user ON repository_grants (user_id) WHERE user_id IS NOT NULL;

-- An organization's machine accounts; only hashes of their secrets.
CREATE TABLE robots (
    id                         text COLLATE "C" PRIMARY KEY,
    organization_id            text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                       text COLLATE "C" NOT NULL,
    description                text NOT NULL DEFAULT '',
    repositories               text[] NOT NULL DEFAULT '{}',
    permissions                text[] NOT NULL DEFAULT '{}',
    secret_hash                bytea NOT NULL UNIQUE,
    previous_secret_hash       bytea,
    previous_secret_expires_at timestamptz,
    disabled                   boolean NOT NULL DEFAULT false,
    expires_at                 timestamptz,
    last_used_at               timestamptz,
    created_by                 text NOT NULL DEFAULT '',
    created_at                 timestamptz NOT NULL,
    CONSTRAINT robots_org_name UNIQUE (organization_id, name)
);
CREATE INDEX robots_previous_secret ON robots (previous_secret_hash) WHERE previous_secret_hash IS NOT NULL;

-- CI systems whose OIDC tokens may be exchanged for a robot's credential.
CREATE TABLE trusted_publishers (
    id         text COLLATE "C" PRIMARY KEY,
    robot_id   text NOT NULL REFERENCES robots (id) ON DELETE CASCADE,
    issuer     text COLLATE "C" NOT NULL,
    audience   text NOT NULL,
    claims     jsonb NOT NULL DEFAULT '{}',
    created_by text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);
CREATE INDEX trusted_publishers_robot ON trusted_publishers (robot_id, created_at);
CREATE INDEX trusted_publishers_issuer ON trusted_publishers (issuer, created_at);

-- Short-lived credentials exchanged for a publisher's token (by hash).
CREATE TABLE exchanged_credentials (
    hash         bytea PRIMARY KEY,
    id           text COLLATE "C" NOT NULL UNIQUE,
    robot_id     text NOT NULL REFERENCES robots (id) ON DELETE CASCADE,
    publisher_id text NOT NULL DEFAULT '',
    expires_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX exchanged_credentials_robot ON exchanged_credentials (robot_id);
CREATE INDEX exchanged_credentials_expires ON exchanged_credentials (expires_at);

-- The (issuer, jti) of OIDC tokens already exchanged, until they expire:
-- a token is exchanged once, on any replica.
CREATE TABLE oidc_token_ids (
    issuer     text COLLATE "C" NOT NULL,
    jti        text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, jti)
);
CREATE INDEX oidc_token_ids_expires ON oidc_token_ids (expires_at);

-- Names of deleted organizations, reserved for the name grace period.
CREATE TABLE organization_tombstones (
    name       text COLLATE "C" PRIMARY KEY,
    deleted_at timestamptz NOT NULL
);
