-- chartctl schema, version 11: a chart's OCI tags (its versions with '+'
-- written '_', chartctl.VersionTag) in an index of their own (issue #32),
-- so GET /v2/<name>/tags/list reads one page of the index instead of every
-- version of the chart. The expression keeps the column's "C" collation:
-- the tags list is in byte order, as the distribution spec asks.
CREATE INDEX chart_versions_tag ON chart_versions (repository_id, name, (replace(version, '+', '_')));
