-- chartctl schema, version 11: admission policies of repositories and
-- organizations (issue #30), as JSON, bound to their owner's id and
-- deleted with it (CONTRACT §18 decision 2).
CREATE TABLE repository_policies (
    repository_id text PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    policy        jsonb NOT NULL
);
CREATE TABLE organization_policies (
    organization_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    policy          jsonb NOT NULL
);
