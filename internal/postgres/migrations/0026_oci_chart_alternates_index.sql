-- chartctl schema: an index of chart versions' alternate manifests
-- (CONTRACT §18 decision 10). Every OCI push looks up its version's
-- alternates (ChartAlternates, for signature verification); the unique
-- index oci_manifests_chart covers first manifests only, so that lookup
-- read every manifest row. Alternates are few: the index is partial.
CREATE INDEX oci_manifests_chart_alternates ON oci_manifests (chart_repository, chart_name, chart_version, digest)
    WHERE chart_alternate;
