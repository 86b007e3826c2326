-- chartctl schema, version 4: what bolt schema 4 added (issue #18): the
-- audit log, events and webhook deliveries, quotas and usage, download
-- counters, retention policies; and rendered chart pages (issue #17).

-- The size of a version's provenance file, counted in quota bytes.
-- Versions stored before it count 0, as in bolt.
ALTER TABLE chart_versions ADD COLUMN prov_size bigint NOT NULL DEFAULT 0;

-- The audit log, append-only; an entry's ID is "aud_" and its seq in
-- 16 hex digits, so IDs sort as entries were appended.
CREATE TABLE audit_log (
    seq                   bigserial PRIMARY KEY,
    time                  timestamptz NOT NULL,
    actor_user_id         text NOT NULL DEFAULT '',
    actor_email           text NOT NULL DEFAULT '',
    actor_credential_id   text NOT NULL DEFAULT '',
    actor_credential_kind text NOT NULL DEFAULT '',
    actor_client_ip       text NOT NULL DEFAULT '',
    actor_request_id      text NOT NULL DEFAULT '',
    action                text COLLATE "C" NOT NULL,
    target                text NOT NULL DEFAULT '',
    outcome               text NOT NULL,
    organization          text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_organization ON audit_log (organization, seq) WHERE organization <> '';

-- Events as webhooks receive them.
CREATE TABLE events (
    id           text COLLATE "C" PRIMARY KEY,
    type         text NOT NULL,
    time         timestamptz NOT NULL,
    repository   text NOT NULL DEFAULT '',
    organization text NOT NULL DEFAULT '',
    source       text NOT NULL DEFAULT '',
    subject      text NOT NULL DEFAULT '',
    data         bytea
);

CREATE TABLE webhooks (
    id              text COLLATE "C" PRIMARY KEY,
    repository      text COLLATE "C" NOT NULL DEFAULT '',
    organization    text COLLATE "C" NOT NULL DEFAULT '',
    url             text NOT NULL,
    events          text[] NOT NULL DEFAULT '{}',
    active          boolean NOT NULL,
    secret          bytea NOT NULL DEFAULT '',
    created_by      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    disabled_reason text NOT NULL DEFAULT ''
);
CREATE INDEX webhooks_scope ON webhooks (repository, organization, id);

-- One event on its way to one webhook; its ID is "dlv_" and its seq in 16
-- hex digits. A webhook's pending deliveries go out in seq order.
-- attempts is a JSON array of {at, status_code, duration_ns, excerpt}.
CREATE TABLE deliveries (
    seq             bigserial PRIMARY KEY,
    webhook_id      text COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        text COLLATE "C" NOT NULL,
    state           text NOT NULL,
    attempts        jsonb NOT NULL DEFAULT '[]',
    next_attempt_at timestamptz,
    created_at      timestamptz NOT NULL
);
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, seq);
CREATE INDEX deliveries_pending ON deliveries (webhook_id, seq) WHERE state = 'pending';

-- Quotas of repositories and organizations (scope 'repository' or
-- 'organization'); NULL is unlimited.
CREATE TABLE quotas (
    scope        text NOT NULL,
    name         text COLLATE "C" NOT NULL,
    max_bytes    bigint,
    max_versions bigint,
    PRIMARY KEY (scope, name)
);

-- What each repository and organization holds, kept by every chart write
-- in its transaction. Its rows are the locks that make a quota exact
-- under concurrent uploads on any number of replicas.
CREATE TABLE usage (
    scope    text NOT NULL,
    name     text COLLATE "C" NOT NULL,
    bytes    bigint NOT NULL DEFAULT 0,
    versions bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, name)
);
INSERT INTO usage (scope, name, bytes, versions)
    SELECT 'repository', r.name, COALESCE(sum(c.size + c.prov_size), 0), count(c.name)
    FROM repositories r LEFT JOIN chart_versions c ON c.repository_id = r.id GROUP BY r.name;
INSERT INTO usage (scope, name, bytes, versions)
    SELECT 'organization', o.name, COALESCE(sum(u.bytes), 0), COALESCE(sum(u.versions), 0)
    FROM organizations o
    LEFT JOIN repositories r ON r.organization = o.name
    LEFT JOIN usage u ON u.scope = 'repository' AND u.name = r.name
    GROUP BY o.name;

-- Download counters, added to by every replica's flushes; a version's
-- counter goes with it.
CREATE TABLE downloads (
    repository_id text NOT NULL,
    name          text COLLATE "C" NOT NULL,
    version       text COLLATE "C" NOT NULL,
    count         bigint NOT NULL,
    last_at       timestamptz NOT NULL,
    PRIMARY KEY (repository_id, name, version),
    FOREIGN KEY (repository_id, name, version) REFERENCES chart_versions (repository_id, name, version) ON DELETE CASCADE
);

-- A repository's retention policy, as JSON; it goes with the repository.
CREATE TABLE retention_policies (
    repository_id text PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    policy        jsonb NOT NULL
);

-- Rendered chart pages (internal/chartpage) by chart archive digest.
CREATE TABLE chart_pages (
    digest text COLLATE "C" PRIMARY KEY,
    page   bytea NOT NULL
);
