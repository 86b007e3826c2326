package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// SchemaVersion is the version of what this binary stores (CONTRACT §12).
// A data dir with an older version is upgraded in place by Open; one with
// a newer version is refused, because an older binary would misread it
// (for example, ignore that a user is disabled).
//
// History:
//
//	1: data dirs written before the schema was versioned (no meta bucket).
//	2: API keys holding the six original scopes also hold keys:write and
//	   admin; users may be disabled and carry last_seen_at.
//	3: the chart_semver index (chart name + canonical SemVer → version)
//	   that makes SemVer-equal versions a conflict with one lookup.
//	4: quotas and usage counters, audit log, events and webhook outbox,
//	   download counters, retention policies. Usage counters are kept by
//	   every chart write, so a binary that does not know them must not
//	   write to this data dir.
//	5: repositories may be mirrors of an upstream Helm repository (the
//	   "mirror" member of a repository record). Nothing is rewritten, but
//	   a binary that does not know mirrors would drop their settings on
//	   the next update of the record and accept uploads into them.
//	6: repository webhooks and OCI upload sessions carry the ID of their
//	   repository and go with it (CONTRACT §18 decision 2). The upgrade
//	   binds those of an existing repository to its ID and drops those
//	   whose repository is gone, with the quotas, usage counters and
//	   retention policies left behind by a repository of that name: an
//	   older binary would keep them and hand them to the next repository
//	   of the name.
//	7: a chart version may hold a second OCI manifest, an alternate (the
//	   "alternate" member of an OCI manifest record, CONTRACT §18 decision
//	   10). Nothing is rewritten, but a binary that does not know
//	   alternates would leave them behind when it deletes their version.
//	8: access for machines and per repository (issue #29): repository
//	   grants, robot accounts, trusted publishers, exchanged credentials
//	   and OIDC token IDs in buckets of their own (created at open), and
//	   API keys restricted to repositories (the "repositories" member of
//	   a key record). Nothing is rewritten, but a binary of schema 7 would
//	   read a restricted key as unrestricted, and leave grants behind when
//	   it deletes their repository or user.
//	9: users may be bound to an identity provider's account (issue #28:
//	   the "identity" member of a user record, and the user_identities
//	   index created at open). Nothing is rewritten, but a binary of
//	   schema 8 would drop the binding the next time it updates the user
//	   and let the IdP sign-in create a second account.
//	10: the chart_tags index (chart name + OCI tag → version) that lists
//	   a chart's OCI tags a page at a time without reading its version
//	   records (issue #32). The upgrade builds it from the stored
//	   versions; a binary of schema 9 would not keep it up to date.
//	11: identity provider groups (issue #28): teams bound to groups and
//	   the groups of a user's last sign-in (the "idp_groups" members of
//	   team and user records), SCIM tokens and groups in buckets of
//	   their own (created at open). Nothing is rewritten, but a binary
//	   of schema 10 would drop a team's binding the next time it writes
//	   the team, and accept hand-added members of a bound team.
//	12: a repository's index format (issue #32: the "index_format" member
//	   of a repository record; absent reads as yaml, the format every
//	   repository served before). Nothing is rewritten, but a binary of
//	   schema 11 would drop the format the next time it updates the
//	   repository, and serve a JSON repository's index as YAML.
//	13: signature verification (issue #30): trust entries in a bucket of
//	   their own (created at open) and chart records with a
//	   "verification" member. Nothing is rewritten (versions stored before
//	   are verified by a background job, never at start), but a binary of
//	   schema 12 would drop verification records when it rewrites a chart
//	   record, and keep trust entries of deleted repositories.
//	14: repositories and organizations may have admission policies
//	   (issue #30), in the policies bucket created at open. Nothing is
//	   rewritten, but a binary of schema 13 would accept what a policy
//	   refuses and leave the policy behind when it deletes its repository.
//	15: held chart versions (issue #30): chart records with a
//	   "held_until" member and their index in chart_held (created at
//	   open). Nothing is rewritten (no version was held before), but a
//	   binary of schema 14 would list, index and serve held versions and
//	   never delete them.
//	16: chart versions keep their admission verdict (issue #30: the
//	   "policy" member of a chart record: findings kept at push, and the
//	   rules a version breaks after a policy change). Nothing is
//	   rewritten, but a binary of schema 15 would drop the verdict the
//	   next time it rewrites the chart record.
//	17: replications (issue #31) and their task queues, in buckets of
//	   their own (created at open), filled by every write of an event.
//	   Nothing is rewritten, but a binary of schema 16 would write events
//	   without queueing their replication tasks (a push it took would
//	   never reach the target) and keep replications of deleted
//	   repositories.
//	18: what each chart archive renders with its default values (issue
//	   #33), in the rendered bucket (created at open), keyed by the
//	   archive's digest and filled by the images job. Nothing is
//	   rewritten (the job renders the versions stored before), but a
//	   binary of schema 17 would keep the renderings of archives it
//	   deletes.
//	19: two OCI indexes (issue #32), in buckets of their own (created at
//	   open): a name's tags by manifest digest, and chart versions'
//	   alternate manifests, so deleting a manifest or finding a version's
//	   alternates (at every push) no longer walks every tag or manifest
//	   of the name. The upgrade builds both from the stored tags and
//	   manifests; a binary of schema 18 would not keep them up to date.
//	20: the OCI artifact index (issue #32), in a bucket of its own
//	   (created at open): the manifests that are not chart versions, so
//	   counting a repository's OCI bytes against a max_bytes quota (at
//	   every blob upload into it) reads those instead of every chart
//	   version's manifest. The upgrade builds it from the stored
//	   manifests; a binary of schema 19 would not keep it up to date.
const SchemaVersion = 20

// ErrNewerSchema is returned (wrapped) by Open when the data dir was
// written by a newer chartctl; test for it with errors.Is.
var ErrNewerSchema = errors.New("data dir written by a newer chartctl")

const (
	// metaBucket: schemaVersionKey → the schema version, big-endian uint64.
	metaBucket       = "meta"
	schemaVersionKey = "schema_version"
)

// upgrades[i] upgrades a database at version i+1 to version i+2, inside
// the transaction that records the new version.
var upgrades = []func(tx *bbolt.Tx) error{
	upgradeLegacyKeyScopes,
	upgradeSemverIndex,
	resetUsage,
	upgradeMirrors,
	bindToRepositories,
	upgradeChartAlternates,
	upgradeAccess,
	upgradeIdentities,
	upgradeChartTags,
	upgradeIDPGroups,
	upgradeIndexFormats,
	upgradeTrust,
	upgradePolicies,
	upgradeHeld,
	upgradeVersionPolicies,
	upgradeReplications,
	upgradeRendered,
	upgradeOCIIndexes,
	upgradeOCIArtifacts,
}

// upgradeOCIArtifacts (19→20) builds the artifact index
// (ociArtifactsBucket) from the stored manifest records that are not
// chart versions.
func upgradeOCIArtifacts(tx *bbolt.Tx) error {
	artifacts := bucket(tx, ociArtifactsBucket)
	return bucket(tx, ociManifestsBucket).ForEach(func(k, v []byte) error {
		r, err := decode[ociManifestRecord](v)
		if err != nil || r.Chart != nil {
			return err
		}
		return artifacts.Put(k, nil)
	})
}

// upgradeOCIIndexes (18→19) builds the tag index (ociTagDigestsBucket)
// from the stored tags and the alternates index (ociChartAlternatesBucket)
// from the manifest records marked alternate.
func upgradeOCIIndexes(tx *bbolt.Tx) error {
	byDigest := bucket(tx, ociTagDigestsBucket)
	if err := bucket(tx, ociTagsBucket).ForEach(func(k, v []byte) error {
		name, tag, _ := strings.Cut(string(k), sep)
		return byDigest.Put(key(name, string(v), tag), nil)
	}); err != nil {
		return err
	}
	alternates := bucket(tx, ociChartAlternatesBucket)
	return bucket(tx, ociManifestsBucket).ForEach(func(_, v []byte) error {
		if !bytes.Contains(v, []byte(`"alternate":true`)) {
			return nil
		}
		r, err := decode[ociManifestRecord](v)
		if err != nil || !r.Alternate || r.Chart == nil {
			return err
		}
		return alternates.Put(key(r.Chart.Repository, r.Chart.Name, r.Chart.Version, r.Digest), []byte(r.Name))
	})
}

// upgradeRendered (17→18): the rendered bucket is created at open and
// starts empty; the images job renders the versions already stored, so
// nothing is rewritten.
func upgradeRendered(*bbolt.Tx) error { return nil }

// upgradeHeld (14→15): the chart_held bucket is created at open and no
// version of an older data dir is held, so nothing is rewritten.
func upgradeHeld(*bbolt.Tx) error { return nil }

// upgradeReplications (16→17): the replication buckets are created at
// open and hold nothing yet, so nothing is rewritten; the version records
// that this binary queues replication tasks with events.
func upgradeReplications(*bbolt.Tx) error { return nil }

// upgradeTrust (12→13): the trust bucket is created at open and chart
// records gain their verification member when first verified, so nothing
// is rewritten; the version records that this binary knows both.
func upgradeTrust(tx *bbolt.Tx) error { return nil }

// bindToRepositories (5→6): binds repository webhooks and OCI upload
// sessions to the ID of the repository that holds their repository name
// now, and drops them, and the quotas, usage counters and retention
// policies of repository names no repository holds, when there is none.
func bindToRepositories(tx *bbolt.Tx) error {
	ids := map[string]string{}
	if err := bucket(tx, reposBucket).ForEach(func(k, v []byte) error {
		r, err := decode[repoRecord](v)
		if err != nil {
			return err
		}
		ids[string(k)] = r.ID
		return nil
	}); err != nil {
		return err
	}
	type put struct{ k, v []byte }
	var (
		puts      []put
		dropHooks []string
	)
	if err := bucket(tx, webhooksBucket).ForEach(func(k, v []byte) error {
		w, err := decode[webhookRecord](v)
		if err != nil || w.Repository == "" {
			return err
		}
		id, ok := ids[w.Repository]
		if !ok {
			dropHooks = append(dropHooks, string(k))
			return nil
		}
		w.RepositoryID = id
		nv, err := encode(w)
		puts = append(puts, put{bytes.Clone(k), nv})
		return err
	}); err != nil {
		return err
	}
	for _, p := range puts {
		if err := bucket(tx, webhooksBucket).Put(p.k, p.v); err != nil {
			return err
		}
	}
	for _, id := range dropHooks {
		if err := deleteWebhook(tx, id); err != nil {
			return err
		}
	}
	puts = nil
	uploads := bucket(tx, ociUploadsBucket)
	var gone [][]byte
	if err := uploads.ForEach(func(k, v []byte) error {
		u, err := decode[ociUploadRecord](v)
		if err != nil {
			return err
		}
		id, ok := ids[ociRepoOf(u.Name)]
		if !ok {
			gone = append(gone, bytes.Clone(k))
			return nil
		}
		u.RepositoryID = id
		nv, err := encode(u)
		puts = append(puts, put{bytes.Clone(k), nv})
		return err
	}); err != nil {
		return err
	}
	for _, p := range puts {
		if err := uploads.Put(p.k, p.v); err != nil {
			return err
		}
	}
	if err := deleteEach(uploads, gone); err != nil {
		return err
	}
	// Quotas and usage are keyed scope sep name, retention policies by
	// repository name.
	for _, b := range []string{quotasBucket, usageBucket} {
		bk := bucket(tx, b)
		gone = nil
		if err := scanPrefix(bk, prefix(chartctl.QuotaRepository), func(k, _ []byte) error {
			if _, ok := ids[strings.TrimPrefix(string(k), chartctl.QuotaRepository+sep)]; !ok {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		if err := deleteEach(bk, gone); err != nil {
			return err
		}
	}
	ret := bucket(tx, retentionBucket)
	gone = nil
	if err := ret.ForEach(func(k, _ []byte) error {
		if _, ok := ids[string(k)]; !ok {
			gone = append(gone, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	return deleteEach(ret, gone)
}

// deleteEach deletes keys from b.
func deleteEach(b *bbolt.Bucket, keys [][]byte) error {
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// upgradeChartAlternates (6→7): manifest records without an "alternate"
// member are first manifests, as before; only the version changes.
func upgradeChartAlternates(*bbolt.Tx) error { return nil }

// upgradeAccess (7→8): key records without a "repositories" member are
// unrestricted, as before, and the access buckets start empty; only the
// version changes.
func upgradeAccess(*bbolt.Tx) error { return nil }

// upgradeIdentities (8→9): user records without an "identity" member are
// local accounts, as before, and the identity index starts empty; only
// the version changes.
func upgradeIdentities(*bbolt.Tx) error { return nil }

// upgradeIDPGroups (10→11): team records without an "idp_groups" member
// are unbound, user records without one have no known groups, and the
// SCIM buckets start empty; only the version changes.
func upgradeIDPGroups(*bbolt.Tx) error { return nil }

// upgradeIndexFormats (11→12): repository records without an
// "index_format" member keep serving YAML, as before; only the version
// changes.
func upgradeIndexFormats(*bbolt.Tx) error { return nil }

// upgradeMirrors (4→5): repository records without a "mirror" member are
// ordinary repositories, as before; only the version changes.
func upgradeMirrors(*bbolt.Tx) error { return nil }

// resetUsage (3→4): usage counters are recomputed from the chart records
// on first use, so none written before this version is trusted.
func resetUsage(tx *bbolt.Tx) error {
	b := bucket(tx, usageBucket)
	var keys [][]byte
	if err := b.ForEach(func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// schemaError explains a data dir this binary must not open.
type schemaError struct {
	path  string
	found uint64
}

func (e *schemaError) Error() string {
	return fmt.Sprintf("the data in %s was written by a newer chartctl (schema %d); this binary supports up to %d: upgrade chartctl", e.path, e.found, SchemaVersion)
}

func (e *schemaError) Unwrap() error { return ErrNewerSchema }

// readSchemaVersion returns the stored schema version: the meta bucket's
// record, or for a database without one, 1 when it holds data written
// before versions existed and 0 when it is new.
func readSchemaVersion(tx *bbolt.Tx) (uint64, error) {
	if m := tx.Bucket([]byte(metaBucket)); m != nil {
		v := m.Get([]byte(schemaVersionKey))
		if len(v) != 8 {
			return 0, fmt.Errorf("stored schema version %q is unreadable", v)
		}
		return binary.BigEndian.Uint64(v), nil
	}
	if u := tx.Bucket([]byte(usersBucket)); u != nil {
		return 1, nil
	}
	return 0, nil
}

func writeSchemaVersion(tx *bbolt.Tx, v uint64) error {
	m, err := tx.CreateBucketIfNotExists([]byte(metaBucket))
	if err != nil {
		return err
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], v)
	return m.Put([]byte(schemaVersionKey), buf[:])
}

// migrate brings the database to SchemaVersion in one transaction: a new
// database is stamped, an older one upgraded step by step, a newer one
// refused before anything is written. It reports the version found.
func migrate(bdb *bbolt.DB) (from uint64, err error) {
	err = bdb.Update(func(tx *bbolt.Tx) error {
		from, err = readSchemaVersion(tx)
		if err != nil {
			return err
		}
		if from > SchemaVersion {
			return &schemaError{path: bdb.Path(), found: from}
		}
		if err := createBuckets(tx); err != nil {
			return err
		}
		if from == SchemaVersion {
			return assignIndexGens(tx)
		}
		if from > 0 {
			for v := from; v < SchemaVersion; v++ {
				if err := upgrades[v-1](tx); err != nil {
					return fmt.Errorf("upgrade schema %d to %d: %w", v, v+1, err)
				}
			}
		}
		if err := assignIndexGens(tx); err != nil {
			return err
		}
		return writeSchemaVersion(tx, SchemaVersion)
	})
	return from, err
}

// upgradeLegacyKeyScopes (1→2): a key that holds all six original scopes
// also holds keys:write and admin (CONTRACT §13), so the initial admin
// key and CI keys keep working. OAuth codes and tokens keep their scopes:
// the consent page that granted them never showed admin.
func upgradeLegacyKeyScopes(tx *bbolt.Tx) error {
	keys := bucket(tx, apiKeysBucket)
	type change struct{ k, v []byte }
	var changes []change
	err := keys.ForEach(func(k, v []byte) error {
		r, err := decode[apiKeyRecord](v)
		if err != nil {
			return err
		}
		scopes := scopesOf(r.Scopes)
		if !scopes.Covers(chartctl.OriginalScopes) {
			return nil
		}
		upgraded := append(scopes, chartctl.ScopeKeysWrite, chartctl.ScopeAdmin)
		norm, err := chartctl.NewScopes("scopes", upgraded.Strings())
		if err != nil {
			return err
		}
		r.Scopes = norm.Strings()
		nv, err := encode(r)
		if err != nil {
			return err
		}
		changes = append(changes, change{append([]byte(nil), k...), nv})
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range changes {
		if err := keys.Put(c.k, c.v); err != nil {
			return err
		}
	}
	return nil
}

// UpgradedFrom returns the schema version Open found and upgraded to
// SchemaVersion, or 0 when it found the current version or a new file.
func (db *DB) UpgradedFrom() int {
	if db.upgradedFrom == SchemaVersion {
		return 0
	}
	return db.upgradedFrom
}

// SchemaVersionOf returns the schema version stored in the open database.
func (db *DB) SchemaVersionOf() (int, error) {
	var v uint64
	err := db.db.View(func(tx *bbolt.Tx) error {
		var err error
		v, err = readSchemaVersion(tx)
		return err
	})
	return int(v), err
}
