-- chartctl schema: replications (issue #31) and their task queues. A
-- replication is bound to its source repository's id and deleted with it
-- (CONTRACT §18 decision 2); its tasks go with it. Tasks are queued in
-- the transaction that writes the event asking for them.
CREATE TABLE replications (
    id              text PRIMARY KEY,
    name            text COLLATE "C" NOT NULL UNIQUE,
    source          text COLLATE "C" NOT NULL,
    source_id       text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    target          text NOT NULL,
    username        text NOT NULL DEFAULT '',
    password        bytea NOT NULL DEFAULT '',
    filter_name     text NOT NULL DEFAULT '',
    filter_version  text NOT NULL DEFAULT '',
    ops             text[] NOT NULL DEFAULT '{}',
    created_by      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    last_success_at timestamptz,
    last_error      text NOT NULL DEFAULT ''
);
CREATE TABLE replication_tasks (
    seq             bigserial PRIMARY KEY,
    replication_id  text NOT NULL REFERENCES replications (id) ON DELETE CASCADE,
    op              text NOT NULL,
    chart           text NOT NULL,
    version         text NOT NULL,
    event_id        text NOT NULL DEFAULT '',
    attempts        integer NOT NULL DEFAULT 0,
    last_error      text NOT NULL DEFAULT '',
    failed          boolean NOT NULL DEFAULT false,
    next_attempt_at timestamptz NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX replication_tasks_queue ON replication_tasks (replication_id, seq);
