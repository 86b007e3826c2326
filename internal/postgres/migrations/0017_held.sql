-- chartctl schema, version 12: held chart versions (issue #30). A version
-- stored under a require_signature policy without a verified signature is
-- held until held_until: in no index, list or tag list until released
-- (held_until set back to NULL), deleted by the hold sweep after it.
ALTER TABLE chart_versions ADD COLUMN held_until timestamptz;
CREATE INDEX chart_versions_held ON chart_versions (held_until) WHERE held_until IS NOT NULL;
