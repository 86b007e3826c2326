package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	bbolt "go.etcd.io/bbolt"
)

// Buckets. Keys joined from several parts use sep, which no name, email or
// ID contains (names are validated; emails and IDs never hold NUL).
const (
	// usersBucket: user ID → userRecord.
	usersBucket = "users"
	// userEmailsBucket: lowercased email → user ID.
	userEmailsBucket = "user_emails"
	// userIdentitiesBucket: provider sep issuer sep subject → user ID;
	// the users bound to an identity provider's account (schema 9).
	userIdentitiesBucket = "user_identities"

	// apiKeysBucket: key ID → apiKeyRecord.
	apiKeysBucket = "api_keys"
	// apiKeyHashesBucket: key hash → key ID.
	apiKeyHashesBucket = "api_key_hashes"
	// userAPIKeysBucket: user ID sep key ID → nothing; a user's keys.
	userAPIKeysBucket = "user_api_keys"

	// orgsBucket: organization name → orgRecord.
	orgsBucket = "orgs"
	// orgCreatorsBucket: creator's user ID sep organization name → nothing;
	// the organizations a user owns by having created them.
	orgCreatorsBucket = "org_creators"

	// reposBucket: repository name → repoRecord.
	reposBucket = "repos"
	// chartsBucket holds one nested bucket per repository name, in which
	// chart name sep version → chartRecord.
	chartsBucket = "charts"
	// chartIndexBucket mirrors chartsBucket (one nested bucket per
	// repository, the same keys) with each version's rendered Helm index
	// entry as raw bytes after an 8-byte big-endian CreatedAt in Unix
	// nanoseconds, so a repository's index loads without decoding records.
	chartIndexBucket = "chart_index"
	// chartSemverBucket holds one nested bucket per repository name, in
	// which chart name sep canonical SemVer version sep version → nothing:
	// the stored versions of a chart by their SemVer identity (build
	// metadata and a leading "v" dropped, see canonicalVersion), so a
	// SemVer-equal version is found with one seek. Data written before the
	// index existed may hold several versions under one canonical version;
	// all of them are indexed.
	chartSemverBucket = "chart_semver"
	// chartTagsBucket holds one nested bucket per repository name, in
	// which chart name sep OCI tag (chartctl.VersionTag) → version: the
	// tags of a chart's versions in the byte order the OCI tags list
	// answers in, so a page of tags is one seek and n steps whatever
	// the number of versions (schema 10).
	chartTagsBucket = "chart_tags"
	// repoTombstonesBucket: name of a deleted repository →
	// repoTombstoneRecord, until the name grace period has passed.
	repoTombstonesBucket = "repo_tombstones"
	// blobRefsBucket: blob digest → number of chart records referring to
	// it (as archive or provenance), as a big-endian uint64. A digest is
	// absent when nothing refers to it.
	blobRefsBucket = "blob_refs"

	// teamsBucket: team name → teamRecord (with its member count).
	teamsBucket = "teams"
	// orgTeamsBucket: organization name sep team name → nothing.
	orgTeamsBucket = "org_teams"
	// membersBucket holds one nested bucket per team name, in which
	// lowercased email → memberRecord.
	membersBucket = "members"
	// memberIDsBucket: member ID → team name sep lowercased email.
	memberIDsBucket = "member_ids"
	// emailTeamsBucket: lowercased email sep team name → organization
	// name sep role; answers OrgRoles with one prefix scan.
	emailTeamsBucket = "email_teams"

	// oauthClientsBucket: client ID → oauthClientRecord.
	oauthClientsBucket = "oauth_clients"
	// oauthCodesBucket: code hash → oauthCodeRecord.
	oauthCodesBucket = "oauth_codes"
	// oauthTokensBucket: token hash → oauthTokenRecord.
	oauthTokensBucket = "oauth_tokens"
	// oauthGrantsBucket: grant ID → oauthGrantRecord; a grant is a family
	// of tokens, revoked as one.
	oauthGrantsBucket = "oauth_grants"
	// webSessionsBucket: session hash → webSessionRecord.
	webSessionsBucket = "web_sessions"
	// deviceCodesBucket: device code hash → deviceRecord (RFC 8628).
	deviceCodesBucket = "oauth_device_codes"
	// deviceUserCodesBucket: user code hash → device code hash.
	deviceUserCodesBucket = "oauth_device_user_codes"

	// chartPagesBucket: chart archive digest → the chart's rendered web
	// page as JSON (internal/chartpage), kept across restarts.
	chartPagesBucket = "chart_pages"
)

// Access buckets (issue #29). They are created at open, so a data dir of
// schema 7 gains them without a migration step.
const (
	// grantsBucket: repository ID sep kind sep subject ID → grantRecord.
	grantsBucket = "grants"
	// subjectGrantsBucket: subject ID (user or team) sep repository ID →
	// kind; the grants of one subject, for GrantsFor and for deleting them
	// with their user or team.
	subjectGrantsBucket = "subject_grants"
	// robotsBucket: robot ID → robotRecord.
	robotsBucket = "robots"
	// robotNamesBucket: organization ID sep robot name → robot ID.
	robotNamesBucket = "robot_names"
	// robotSecretsBucket: secret hash (current or previous) → robot ID.
	robotSecretsBucket = "robot_secrets"
	// publishersBucket: publisher ID → publisherRecord.
	publishersBucket = "publishers"
	// robotPublishersBucket: robot ID sep publisher ID → nothing.
	robotPublishersBucket = "robot_publishers"
	// issuerPublishersBucket: issuer sep publisher ID → nothing.
	issuerPublishersBucket = "issuer_publishers"
	// exchangedBucket: credential hash → exchangedRecord.
	exchangedBucket = "exchanged_credentials"
	// tokenIDsBucket: issuer sep jti → expiry as 8-byte big-endian Unix
	// nanoseconds.
	tokenIDsBucket = "oidc_token_ids"
	// orgTombstonesBucket: name of a deleted organization → its deletion
	// time as 8-byte big-endian Unix nanoseconds, until the name grace
	// period has passed.
	orgTombstonesBucket = "org_tombstones"
)

// SCIM (schema 10).
const (
	// scimTokensBucket: token ID → scimTokenRecord.
	scimTokensBucket = "scim_tokens"
	// scimTokenHashesBucket: token hash → token ID.
	scimTokenHashesBucket = "scim_token_hashes"
	// scimGroupsBucket: group ID → scimGroupRecord.
	scimGroupsBucket = "scim_groups"
	// scimGroupNamesBucket: group display name → group ID.
	scimGroupNamesBucket = "scim_group_names"
)

var accessBuckets = []string{
	grantsBucket, subjectGrantsBucket,
	robotsBucket, robotNamesBucket, robotSecretsBucket,
	publishersBucket, robotPublishersBucket, issuerPublishersBucket,
	exchangedBucket, tokenIDsBucket, orgTombstonesBucket,
	scimTokensBucket, scimTokenHashesBucket, scimGroupsBucket, scimGroupNamesBucket,
	policiesBucket,
}

const sep = "\x00"

var allBuckets = []string{
	usersBucket, userEmailsBucket, userIdentitiesBucket,
	apiKeysBucket, apiKeyHashesBucket, userAPIKeysBucket,
	orgsBucket, orgCreatorsBucket,
	reposBucket, chartsBucket, chartIndexBucket, chartSemverBucket, chartTagsBucket, repoTombstonesBucket, blobRefsBucket,
	teamsBucket, orgTeamsBucket, membersBucket, memberIDsBucket, emailTeamsBucket,
	oauthClientsBucket, oauthCodesBucket, oauthTokensBucket, oauthGrantsBucket, webSessionsBucket,
	deviceCodesBucket, deviceUserCodesBucket,
	auditBucket, eventsBucket, webhooksBucket, deliveriesBucket, webhookQueueBucket, webhookLogBucket,
	quotasBucket, usageBucket, downloadsBucket, retentionBucket,
	chartPagesBucket,
}

// createBuckets creates every top-level bucket that does not exist yet.
func createBuckets(tx *bbolt.Tx) error {
	for _, name := range slices.Concat(allBuckets, ociBuckets, accessBuckets, trustBuckets, replicationBuckets, renderedBuckets, indexGenBuckets) {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// bucket returns a top-level bucket, which Open has created.
func bucket(tx *bbolt.Tx, name string) *bbolt.Bucket { return tx.Bucket([]byte(name)) }

// key joins parts with sep.
func key(parts ...string) []byte { return []byte(strings.Join(parts, sep)) }

// prefix returns the key prefix matching every key whose first part is p.
func prefix(p string) []byte { return []byte(p + sep) }

// scanPrefix calls fn for every key/value in b whose key starts with pfx,
// in key order, stopping at fn's first error.
func scanPrefix(b *bbolt.Bucket, pfx []byte, fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(pfx); k != nil && bytes.HasPrefix(k, pfx); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// lowerEmail is the index form of an email address.
func lowerEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// addRef counts one more reference to digest.
func addRef(refs *bbolt.Bucket, digest string) error {
	n := refCount(refs, digest) + 1
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], n)
	return refs.Put([]byte(digest), buf[:])
}

// dropRef counts one reference less to digest and reports whether none is
// left (the key is then deleted).
func dropRef(refs *bbolt.Bucket, digest string) (orphaned bool, err error) {
	n := refCount(refs, digest)
	if n <= 1 {
		return n == 1, refs.Delete([]byte(digest))
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], n-1)
	return false, refs.Put([]byte(digest), buf[:])
}

func refCount(refs *bbolt.Bucket, digest string) uint64 {
	v := refs.Get([]byte(digest))
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// chartDigests returns the blob digests a chart record refers to.
func chartDigests(r *chartRecord) []string {
	if r.ProvDigest == "" {
		return []string{r.Digest}
	}
	return []string{r.Digest, r.ProvDigest}
}
