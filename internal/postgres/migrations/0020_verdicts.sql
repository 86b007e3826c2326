-- chartctl schema, version 17: each chart version's admission verdict
-- (issue #30): the findings kept at push and the rules a version breaks
-- after a policy change, as JSON (NULL until a policy recorded one).
ALTER TABLE chart_versions ADD COLUMN policy jsonb;
