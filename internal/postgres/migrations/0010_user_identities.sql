-- chartctl schema, version 10: users bound to an identity provider's
-- account (issue #28). A bound user is found by (provider, issuer,
-- subject), never by email alone; local accounts keep empty columns.
ALTER TABLE users ADD COLUMN identity_provider text NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN identity_issuer text NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN identity_subject text NOT NULL DEFAULT '';
CREATE UNIQUE INDEX users_identity_key ON users (identity_provider, identity_issuer, identity_subject)
    WHERE identity_provider <> '';
