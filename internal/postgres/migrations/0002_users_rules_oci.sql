-- chartctl schema, version 2: user management, the chart rules bolt added
-- (content digests, SemVer-equal versions, name reservations of deleted
-- repositories) and the OCI registry's metadata.

ALTER TABLE users
    ADD COLUMN disabled     boolean NOT NULL DEFAULT false,
    ADD COLUMN last_seen_at timestamptz;

-- content_digest is the digest over the chart's files ('' when unknown);
-- canonical_version is the SemVer identity of the version (build metadata
-- and a leading "v" dropped), NULL for a version that is not SemVer. Its
-- unique index lets exactly one of SemVer-equal versions in. (The Go side
-- of the migration fills it for the versions already stored.)
ALTER TABLE chart_versions
    ADD COLUMN content_digest    text NOT NULL DEFAULT '',
    ADD COLUMN canonical_version text COLLATE "C";
CREATE UNIQUE INDEX chart_versions_canonical
    ON chart_versions (repository_id, name, canonical_version)
    WHERE canonical_version IS NOT NULL;

-- The names of deleted repositories, reserved for their owner (the same
-- organization, or for personal repositories the same user) until the
-- name grace period has passed.
CREATE TABLE repository_tombstones (
    name         text COLLATE "C" PRIMARY KEY,
    owner_id     text NOT NULL DEFAULT '',
    organization text COLLATE "C" NOT NULL DEFAULT '',
    deleted_at   timestamptz NOT NULL
);

-- OCI manifests by repository name and digest, with the manifest bytes.
-- chart_* name the chart version a manifest stands for (at most one).
CREATE TABLE oci_manifests (
    name             text COLLATE "C" NOT NULL,
    digest           text COLLATE "C" NOT NULL,
    media_type       text NOT NULL DEFAULT '',
    artifact_type    text NOT NULL DEFAULT '',
    subject          text COLLATE "C" NOT NULL DEFAULT '',
    annotations      jsonb,
    blobs            text[] NOT NULL DEFAULT '{}',
    manifests        text[] NOT NULL DEFAULT '{}',
    content          bytea NOT NULL,
    chart_repository text COLLATE "C",
    chart_name       text COLLATE "C",
    chart_version    text COLLATE "C",
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (name, digest)
);
CREATE INDEX oci_manifests_subject ON oci_manifests (name, subject, digest) WHERE subject <> '';
CREATE UNIQUE INDEX oci_manifests_chart ON oci_manifests (chart_repository, chart_name, chart_version)
    WHERE chart_repository IS NOT NULL;

-- The blobs each manifest refers to (config and layers), so that "does a
-- manifest of this name use this blob" is one index probe.
CREATE TABLE oci_manifest_blobs (
    name     text COLLATE "C" NOT NULL,
    manifest text COLLATE "C" NOT NULL,
    blob     text COLLATE "C" NOT NULL,
    PRIMARY KEY (name, manifest, blob),
    FOREIGN KEY (name, manifest) REFERENCES oci_manifests (name, digest) ON DELETE CASCADE
);
CREATE INDEX oci_manifest_blobs_blob ON oci_manifest_blobs (name, blob);

CREATE TABLE oci_tags (
    name   text COLLATE "C" NOT NULL,
    tag    text COLLATE "C" NOT NULL,
    digest text COLLATE "C" NOT NULL,
    PRIMARY KEY (name, tag),
    FOREIGN KEY (name, digest) REFERENCES oci_manifests (name, digest) ON DELETE CASCADE
);
CREATE INDEX oci_tags_digest ON oci_tags (name, digest);

-- The blobs a repository name holds (pushed or mounted there).
CREATE TABLE oci_blob_links (
    name      text COLLATE "C" NOT NULL,
    digest    text COLLATE "C" NOT NULL,
    size      bigint NOT NULL,
    linked_at timestamptz NOT NULL,
    PRIMARY KEY (name, digest)
);
CREATE INDEX oci_blob_links_digest ON oci_blob_links (digest, name);

CREATE TABLE oci_uploads (
    id         text COLLATE "C" PRIMARY KEY,
    name       text COLLATE "C" NOT NULL,
    "offset"   bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
