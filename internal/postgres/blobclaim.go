package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Blob claims (chartctl.BlobClaimStore) are rows of the leases table named
// blob-claim:<digest>/<holder>: like a lease, a claim has a holder and
// lapses on its own (on the database's clock) when its holder dies. Claims
// and deletions of one digest exclude each other through a
// transaction-level advisory lock on the digest: shared for a claim,
// exclusive for a deletion, so concurrent claims never wait for each
// other and a claim never waits for anything but a deletion of its digest.

// blobClaimLock is the first key of the digests' advisory locks ("BL"), so
// they stay clear of the single-key locks (migrations, admins).
const blobClaimLock int32 = 0x424c

// claimPrefix starts the lease names of blob claims.
const claimPrefix = "blob-claim:"

// claimDigests returns the distinct storable digests, sorted.
func claimDigests(digests []string) []string {
	var out []string
	for _, d := range digests {
		if d != "" && storable(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// ClaimBlobs claims digests for holder until ttl from the database's now:
// one statement that takes the digests' shared locks (waiting for a
// deletion under way) and writes the claims, committed before it returns.
func (db *DB) ClaimBlobs(ctx context.Context, holder string, digests []string, ttl time.Duration) error {
	ds := claimDigests(digests)
	if len(ds) == 0 || !storable(holder) {
		return nil
	}
	_, err := db.pool.Exec(ctx, `WITH locked AS MATERIALIZED (
			SELECT d, pg_advisory_xact_lock_shared($1, hashtext(d))::text AS l
			FROM unnest($2::text[]) AS d)
		INSERT INTO leases (name, holder, expires_at)
		SELECT $3 || d || '/' || $4, $4, now() + make_interval(secs => $5) FROM locked
		ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at`,
		blobClaimLock, ds, claimPrefix, holder, ttl.Seconds())
	return db.wrap("claim blobs", err)
}

// ReleaseBlobClaims deletes holder's claims on digests.
func (db *DB) ReleaseBlobClaims(ctx context.Context, holder string, digests []string) error {
	ds := claimDigests(digests)
	if len(ds) == 0 || !storable(holder) {
		return nil
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = claimPrefix + d + "/" + holder
	}
	_, err := db.pool.Exec(ctx, `DELETE FROM leases WHERE name = ANY($1) AND holder = $2`, names, holder)
	return db.wrap("release blob claims", err)
}

// blobReferenced is the condition that a record refers to the blob whose
// digest is the parameter p: a chart version's reference or an OCI link.
func blobReferenced(p string) string {
	return `(EXISTS (SELECT 1 FROM blob_refs WHERE digest = ` + p + `)
		OR EXISTS (SELECT 1 FROM oci_blob_links WHERE digest = ` + p + `))`
}

// DeleteUnreferencedBlob takes digest's exclusive lock in a transaction,
// checks that no claim lasts and no record refers to it, and runs del
// before the transaction ends, so claims of digest wait for del.
func (db *DB) DeleteUnreferencedBlob(ctx context.Context, digest string, del func(ctx context.Context) (bool, error)) (bool, error) {
	if digest == "" || !storable(digest) {
		return false, nil
	}
	// Most blobs a sweep asks about are referenced: one statement
	// answers that, without the transaction and lock a deletion needs (a
	// reference that goes meanwhile leaves the blob to the next sweep).
	var referenced bool
	if err := db.pool.QueryRow(ctx, `SELECT `+blobReferenced("$1"), digest).Scan(&referenced); err != nil {
		return false, db.wrap("delete blob", err)
	}
	if referenced {
		return false, nil
	}
	var deleted bool
	var delErr error
	// Not db.tx: a retry could run del twice.
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, blobClaimLock, digest); err != nil {
			return err
		}
		// Claim names of digest sort from "…<digest>/" up to, not
		// including, "…<digest>0" ('0' follows '/').
		var kept bool
		if err := tx.QueryRow(ctx, `SELECT
				EXISTS (SELECT 1 FROM leases WHERE name >= $1 AND name < $2 AND expires_at > now())
				OR `+blobReferenced("$3"),
			claimPrefix+digest+"/", claimPrefix+digest+"0", digest).Scan(&kept); err != nil {
			return err
		}
		if kept {
			return nil
		}
		// Claims whose holders died without releasing them go with it.
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE name >= $1 AND name < $2`,
			claimPrefix+digest+"/", claimPrefix+digest+"0"); err != nil {
			return err
		}
		deleted, delErr = del(ctx)
		return delErr
	})
	if delErr != nil {
		return false, delErr
	}
	if deleted {
		// The blob is gone even if the commit failed: the transaction
		// only held the lock (and dropped lapsed claims).
		return true, nil
	}
	if err != nil {
		return false, db.wrap("delete blob", err)
	}
	return deleted, nil
}
