package bolt

import (
	"context"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB dumps its records.
var _ chartctl.Exporter = (*DB)(nil)

// Export calls fn with every record, all read in one bbolt read
// transaction: a consistent snapshot that writers do not wait for. OAuth
// codes, tokens, grants and web sessions are short-lived credentials and
// are not exported (people sign in again after a restore).
func (db *DB) Export(ctx context.Context, snapshot func(), fn func(chartctl.DumpRecord) error) error {
	err := db.db.View(func(tx *bbolt.Tx) error {
		if snapshot != nil {
			snapshot()
		}
		each := func(name string, one func(v []byte) error) error {
			return bucket(tx, name).ForEach(func(_, v []byte) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return one(v)
			})
		}
		steps := []struct {
			bucket string
			one    func(v []byte) error
		}{
			{usersBucket, func(v []byte) error {
				r, err := decode[userRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{User: r.domain()})
			}},
			{apiKeysBucket, func(v []byte) error {
				r, err := decode[apiKeyRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{APIKey: r.domain()})
			}},
			{oauthClientsBucket, func(v []byte) error {
				r, err := decode[oauthClientRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{OAuthClient: r.domain()})
			}},
			{orgsBucket, func(v []byte) error {
				r, err := decode[orgRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Organization: r.domain()})
			}},
			{reposBucket, func(v []byte) error {
				r, err := decode[repoRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Repository: r.domain()})
			}},
			{teamsBucket, func(v []byte) error {
				r, err := decode[teamRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Team: r.domain()})
			}},
		}
		for _, s := range steps {
			if err := each(s.bucket, s.one); err != nil {
				return err
			}
		}
		// Nested buckets: members per team, chart versions per repository.
		if err := bucket(tx, membersBucket).ForEachBucket(func(team []byte) error {
			return bucket(tx, membersBucket).Bucket(team).ForEach(func(_, v []byte) error {
				r, err := decode[memberRecord](v)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Member: r.domain()})
			})
		}); err != nil {
			return err
		}
		charts, index := bucket(tx, chartsBucket), bucket(tx, chartIndexBucket)
		return charts.ForEachBucket(func(repo []byte) error {
			ib := index.Bucket(repo)
			return charts.Bucket(repo).ForEach(func(k, v []byte) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				r, err := decode[chartRecord](v)
				if err != nil {
					return err
				}
				cv := r.domain()
				if iv, err := indexVersion(string(repo), ib, k, v); err == nil && len(iv.IndexEntry) > 0 {
					cv.IndexEntry = iv.IndexEntry
				}
				return fn(chartctl.DumpRecord{ChartVersion: cv})
			})
		})
	})
	return wrap("export", err)
}
