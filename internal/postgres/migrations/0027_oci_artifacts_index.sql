-- chartctl schema: an index of the OCI manifests that are not chart
-- versions (issue #32). Counting a repository's OCI bytes against a
-- max_bytes quota (at every blob upload into it, and at every artifact
-- push) selected them with a scan of every manifest row, chart versions
-- included, so its cost grew with the repository. The index is partial,
-- on the repository part of the name, as ociBytes selects them.
CREATE INDEX oci_manifests_artifacts ON oci_manifests (split_part(name, '/', 1))
    WHERE chart_repository IS NULL;
