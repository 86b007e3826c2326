-- chartctl schema, version 11: device authorization requests (RFC 8628,
-- issue #28). Both codes are stored hashed; a user code is unique among
-- stored requests (expired ones are removed before a new one takes it).
CREATE TABLE oauth_device_codes (
    device_code_hash bytea PRIMARY KEY,
    user_code_hash   bytea NOT NULL,
    client_id        text NOT NULL,
    scopes           text[] NOT NULL,
    interval_ms      bigint NOT NULL,
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    last_polled_at   timestamptz,
    status           text NOT NULL,
    user_id          text NOT NULL DEFAULT '',
    grant_id         text NOT NULL DEFAULT '',
    redeemed_at      timestamptz
);
CREATE UNIQUE INDEX oauth_device_codes_user_code ON oauth_device_codes (user_code_hash);
CREATE INDEX oauth_device_codes_expires ON oauth_device_codes (expires_at);
