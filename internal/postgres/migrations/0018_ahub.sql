-- chartctl schema: a repository's artifacthub-repo.yml (issue #33), as
-- JSON ({"repositoryID", "owners": [{"name","email"}], "ignore":
-- [{"name","version"}]}); NULL when its admins set none.
ALTER TABLE repositories ADD COLUMN artifacthub jsonb;
