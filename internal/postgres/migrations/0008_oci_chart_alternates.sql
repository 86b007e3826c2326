-- chartctl schema: a chart version may hold a second OCI manifest (CONTRACT
-- §18 decision 10). A chart uploaded by /v1 and then pushed with `helm
-- push` keeps Helm's manifest beside the derived one; the derived one
-- stays first (the tag names it). Such a row is an alternate: it names its
-- chart version like the first, but the one-manifest-per-version index
-- covers first manifests only. Existing rows are first manifests.
--
-- Written to apply after any other migration: it only adds a column with a
-- default and narrows one index, so its number may change when merged.

ALTER TABLE oci_manifests ADD COLUMN chart_alternate boolean NOT NULL DEFAULT false;

DROP INDEX oci_manifests_chart;
CREATE UNIQUE INDEX oci_manifests_chart ON oci_manifests (chart_repository, chart_name, chart_version)
    WHERE chart_repository IS NOT NULL AND NOT chart_alternate;
