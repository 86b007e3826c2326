-- chartctl schema, version 11: how each repository's Helm index is
-- written (issue #32). Repositories that exist keep the YAML index they
-- served until now; the application chooses json for new ones.
ALTER TABLE repositories ADD COLUMN index_format text NOT NULL DEFAULT 'yaml'
    CHECK (index_format IN ('json', 'yaml'));
