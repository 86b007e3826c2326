-- chartctl schema: each version's JSON index object, stored beside its
-- YAML index entry at upload so a JSON index loads without parsing YAML
-- (issue #32). NULL for versions stored before: the index converts their
-- YAML entry, and the backfill fills the column.
ALTER TABLE chart_versions ADD COLUMN index_entry_json bytea;
