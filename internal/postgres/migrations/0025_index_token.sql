-- chartctl schema: each repository's index token, replaced with its
-- generation by every change to its chart versions (DB.changed), so a
-- replica can tell at start whether the index it kept on disk is still
-- the repository's (Store.IndexGeneration). Open gives one to every
-- repository without (upgraded or restored).
ALTER TABLE repositories ADD COLUMN index_token text;
