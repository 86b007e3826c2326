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
	LastRun                time.Time      `json:"last_run,omitzero"`
}

func (r *retentionRecord) domain() chartctl.RetentionPolicy {
	return chartctl.RetentionPolicy{KeepLatest: r.KeepLatest, KeepPushedWithin: r.KeepPushedWithin,
		KeepDownloadedWithin: r.KeepDownloadedWithin, KeepMatching: r.KeepMatching,
		DeletePrereleasesAfter: r.DeletePrereleasesAfter, Schedule: r.Schedule, LastRun: r.LastRun}
}

// SetRetentionPolicy replaces a repository's policy.
func (db *DB) SetRetentionPolicy(ctx context.Context, repo string, p *chartctl.RetentionPolicy) error {
	return wrap("set retention policy", db.update(ctx, func(tx *bbolt.Tx) error {
		rec, err := getRepo(tx, repo)
		if err != nil {
			return err
		}
		if p != nil && p.RepositoryID != "" && p.RepositoryID != rec.ID {
			// Deleted and re-created since the caller was authorized.
			return repoNotFound(repo)
		}
		b := bucket(tx, retentionBucket)
		if p == nil {
			return b.Delete([]byte(repo))
		}
		// The time of the last scheduled run stays: a new schedule counts
		// from it.
		var last time.Time
		if old := b.Get([]byte(repo)); old != nil {
			r, err := decode[retentionRecord](old)
			if err != nil {
				return err
			}
			last = r.LastRun
		}
		val, err := encode(&retentionRecord{KeepLatest: p.KeepLatest, KeepPushedWithin: p.KeepPushedWithin,
			KeepDownloadedWithin: p.KeepDownloadedWithin, KeepMatching: p.KeepMatching,
			DeletePrereleasesAfter: p.DeletePrereleasesAfter, Schedule: p.Schedule, LastRun: last})
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

// MarkRetentionRun records when a scheduled run applied repo's policy.
func (db *DB) MarkRetentionRun(ctx context.Context, repo string, at time.Time) error {
	return wrap("record retention run", db.update(ctx, func(tx *bbolt.Tx) error {
		b := bucket(tx, retentionBucket)
		old := b.Get([]byte(repo))
		if old == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q has no retention policy.", repo)
		}
		r, err := decode[retentionRecord](old)
		if err != nil {
			return err
		}
		r.LastRun = at.UTC()
		val, err := encode(r)
		if err != nil {
			return err
		}
		return b.Put([]byte(repo), val)
	}))
}
