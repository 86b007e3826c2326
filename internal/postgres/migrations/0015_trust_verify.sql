-- chartctl schema, version 11: signature verification (issue #30). Trust
-- material of a repository or an organization, bound to its ID and
-- deleted with it (CONTRACT §18 decision 2), and each chart version's
-- verification record (NULL until the version was first verified).
ALTER TABLE chart_versions ADD COLUMN verification jsonb;

-- scope_id repeats the ID of exactly one of repository_id and
-- organization_id, so the entry goes with its repository or organization.
CREATE TABLE trust_entries (
    id              text COLLATE "C" PRIMARY KEY,
    scope           text NOT NULL,
    scope_id        text COLLATE "C" NOT NULL,
    repository_id   text REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id text REFERENCES organizations (id) ON DELETE CASCADE,
    name            text COLLATE "C" NOT NULL,
    kind            text NOT NULL,
    key             bytea,
    issuer          text NOT NULL DEFAULT '',
    subject         text NOT NULL DEFAULT '',
    created_by      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    CONSTRAINT trust_entries_name UNIQUE (scope, scope_id, name),
    CONSTRAINT trust_entries_bound CHECK (
        (scope = 'repository' AND repository_id = scope_id AND organization_id IS NULL) OR
        (scope = 'organization' AND organization_id = scope_id AND repository_id IS NULL))
);
