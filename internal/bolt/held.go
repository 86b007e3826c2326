package bolt

import (
	"context"
	"encoding/binary"
	"sort"
	"time"

	"go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// chartHeldBucket indexes the held chart versions (issue #30): one nested
// bucket per repository, version key → HeldUntil as big-endian Unix
// nanoseconds. The record's held_until is the truth; this index lets
// listings, which work on keys alone, leave held versions out without
// decoding records, and lets the hold sweep find them without a scan.
const chartHeldBucket = "chart_held"

// hold records the version under key k of repo as held until until.
func hold(tx *bbolt.Tx, repo string, k []byte, until time.Time) error {
	hb, err := bucket(tx, chartHeldBucket).CreateBucketIfNotExists([]byte(repo))
	if err != nil {
		return err
	}
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, uint64(until.UnixNano()))
	if err := hb.Put(k, v); err != nil {
		return err
	}
	return touchIndex(tx, repo)
}

// unhold forgets that the version under key k of repo is held.
func unhold(tx *bbolt.Tx, repo string, k []byte) error {
	hb := bucket(tx, chartHeldBucket).Bucket([]byte(repo))
	if hb == nil || hb.Get(k) == nil {
		return nil
	}
	if err := hb.Delete(k); err != nil {
		return err
	}
	return touchIndex(tx, repo)
}

// heldKeys returns the held-version index of repo, nil when it holds
// none.
func heldKeys(tx *bbolt.Tx, repo string) *bbolt.Bucket {
	hb := bucket(tx, chartHeldBucket).Bucket([]byte(repo))
	if hb == nil {
		return nil
	}
	if k, _ := hb.Cursor().First(); k == nil {
		return nil
	}
	return hb
}

// dropHeld removes repo's held-version index (the repository is deleted).
func dropHeld(tx *bbolt.Tx, repo string) error {
	hb := bucket(tx, chartHeldBucket)
	if hb.Bucket([]byte(repo)) == nil {
		return nil
	}
	return hb.DeleteBucket([]byte(repo))
}

// withoutHeld returns keys without those in hb (a new slice: keys may be
// the cached order shared by readers).
func withoutHeld(keys []versionKey, hb *bbolt.Bucket) []versionKey {
	out := make([]versionKey, 0, len(keys))
	for _, k := range keys {
		if hb.Get(k.key) == nil {
			out = append(out, k)
		}
	}
	return out
}

// ReleaseChartVersion implements chartctl.TrustStore.
func (db *DB) ReleaseChartVersion(ctx context.Context, repo, name, version, digest string, indexEntry, indexJSON []byte) error {
	if err := validateChartKey(name, version); err != nil {
		return err
	}
	k := key(name, version)
	return wrap("release chart version", db.update(ctx, func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		rec, err := getChart(tx, repo, name, version)
		if err != nil {
			return err
		}
		if rec.Digest != digest {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s was replaced while it was being released.", name, version)
		}
		if rec.HeldUntil == nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s is not held.", name, version)
		}
		rec.HeldUntil = nil
		v, err := encode(rec)
		if err != nil {
			return err
		}
		if err := bucket(tx, chartsBucket).Bucket([]byte(repo)).Put(k, v); err != nil {
			return err
		}
		if err := unhold(tx, repo, k); err != nil {
			return err
		}
		if err := indexTag(tx, repo, name, version); err != nil {
			return err
		}
		return putIndexEntry(tx, repo, k, rec.CreatedAt, indexEntry, indexJSON)
	}))
}

// HeldChartVersions implements chartctl.TrustStore.
func (db *DB) HeldChartVersions(ctx context.Context, before time.Time) ([]*chartctl.ChartVersion, error) {
	var out []*chartctl.ChartVersion
	err := db.db.View(func(tx *bbolt.Tx) error {
		held := bucket(tx, chartHeldBucket)
		return held.ForEachBucket(func(repo []byte) error {
			cb := bucket(tx, chartsBucket).Bucket(repo)
			if cb == nil {
				return nil
			}
			return held.Bucket(repo).ForEach(func(k, v []byte) error {
				if len(v) != 8 || time.Unix(0, int64(binary.BigEndian.Uint64(v))).After(before) {
					return nil
				}
				val := cb.Get(k)
				if val == nil {
					return nil
				}
				r, err := decode[chartRecord](val)
				if err != nil {
					return err
				}
				cv := r.domain()
				cv.Repository = string(repo)
				out = append(out, cv)
				return nil
			})
		})
	})
	if err != nil {
		return nil, wrap("list held chart versions", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].HeldUntil.Before(*out[j].HeldUntil) })
	return out, nil
}

// ExpireHeldChartVersion implements chartctl.TrustStore.
func (db *DB) ExpireHeldChartVersion(ctx context.Context, repo, name, version string, now time.Time) (*chartctl.ChartVersion, []string, error) {
	return db.deleteChart(ctx, "expire held chart version", repo, name, version, func(r *chartRecord) error {
		if r.HeldUntil == nil || r.HeldUntil.After(now) {
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s is not held past its window.", name, version)
		}
		return nil
	})
}

// utcPtr returns a copy of *t in UTC, nil for nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
