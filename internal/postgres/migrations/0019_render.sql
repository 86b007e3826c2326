-- chartctl schema: the images each chart version deploys (issue #33), as
-- JSON, NULL while pending (found after the push by the background job,
-- CONTRACT §18 decisions 9 and 11). Nothing is rewritten: every stored
-- version starts pending and the backfill fills it in.
ALTER TABLE chart_versions ADD COLUMN images jsonb;
