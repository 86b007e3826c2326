package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// retentionBucket: repository name → retentionRecord.
const retentionBucket = "retention"

type retentionRecord struct {
	KeepLatest             *int           `json:"keep_latest,omitempty"`
	KeepPushedWithin       *time.Duration `json:"keep_pushed_within,omitempty"`
	KeepDownloadedWithin   *time.Duration `json:"keep_downloaded_within,omitempty"`
	KeepMatching           string         `json:"keep_matching,omitempty"`
	DeletePrereleasesAfter *time.Duration `json:"delete_prereleases_after,omitempty"`
	Schedule               string         `json:"schedule,omitempty"`
}

func (r *retentionRecord) domain() chartctl.RetentionPolicy {
	return chartctl.RetentionPolicy{KeepLatest: r.KeepLatest, KeepPushedWithin: r.KeepPushedWithin,
		KeepDownloadedWithin: r.KeepDownloadedWithin, KeepMatching: r.KeepMatching,
		DeletePrereleasesAfter: r.DeletePrereleasesAfter, Schedule: r.Schedule}
}

// SetRetentionPolicy replaces a repository's policy.
func (db *DB) SetRetentionPolicy(ctx context.Context, repo string, p *chartctl.RetentionPolicy) error {
	return wrap("set retention policy", db.update(ctx, func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		b := bucket(tx, retentionBucket)
		if p == nil {
			return b.Delete([]byte(repo))
		}
		val, err := encode(&retentionRecord{KeepLatest: p.KeepLatest, KeepPushedWithin: p.KeepPushedWithin,
			KeepDownloadedWithin: p.KeepDownloadedWithin, KeepMatching: p.KeepMatching,
			DeletePrereleasesAfter: p.DeletePrereleasesAfter, Schedule: p.Schedule})
		if err != nil {
			return err
		}
		return b.Put([]byte(repo), val)
	}))
}

// RetentionPolicies returns every policy, by repository.
func (db *DB) RetentionPolicies(ctx context.Context) (map[string]*chartctl.RetentionPolicy, error) {
	out := map[string]*chartctl.RetentionPolicy{}
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, retentionBucket).ForEach(func(k, v []byte) error {
			r, err := decode[retentionRecord](v)
			if err != nil {
				return err
			}
			p := r.domain()
			out[string(k)] = &p
			return nil
		})
	})
	return out, wrap("list retention policies", err)
}
