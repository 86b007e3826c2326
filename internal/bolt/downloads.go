package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// downloadsBucket holds one nested bucket per repository, in which chart
// name sep version → downloadRecord.
const downloadsBucket = "downloads"

type downloadRecord struct {
	Count int64     `json:"count"`
	Last  time.Time `json:"last"`
}

// AddDownloads adds counts in one transaction.
func (db *DB) AddDownloads(ctx context.Context, counts []chartctl.DownloadCount) error {
	return wrap("add downloads", db.db.Update(func(tx *bbolt.Tx) error {
		for _, c := range counts {
			if _, err := getChart(tx, c.Repository, c.Name, c.Version); err != nil {
				continue
			}
			b, err := bucket(tx, downloadsBucket).CreateBucketIfNotExists([]byte(c.Repository))
			if err != nil {
				return err
			}
			k := key(c.Name, c.Version)
			rec := &downloadRecord{}
			if v := b.Get(k); v != nil {
				if rec, err = decode[downloadRecord](v); err != nil {
					return err
				}
			}
			rec.Count += c.Count
			if c.Last.After(rec.Last) {
				rec.Last = c.Last.UTC()
			}
			val, err := encode(rec)
			if err != nil {
				return err
			}
			if err := b.Put(k, val); err != nil {
				return err
			}
		}
		return nil
	}))
}

// withDownloads fills cv's download counter from tx.
func withDownloads(tx *bbolt.Tx, cv *chartctl.ChartVersion) *chartctl.ChartVersion {
	b := bucket(tx, downloadsBucket).Bucket([]byte(cv.Repository))
	if b == nil {
		return cv
	}
	if v := b.Get(key(cv.Name, cv.Version)); v != nil {
		if r, err := decode[downloadRecord](v); err == nil {
			cv.Downloads = r.Count
			last := r.Last
			cv.LastDownloadedAt = &last
		}
	}
	return cv
}

// dropDownloads deletes the counter of one version, or of every version
// of repo when name is "".
func dropDownloads(tx *bbolt.Tx, repo, name, version string) error {
	d := bucket(tx, downloadsBucket)
	if name == "" {
		if d.Bucket([]byte(repo)) != nil {
			return d.DeleteBucket([]byte(repo))
		}
		return nil
	}
	if b := d.Bucket([]byte(repo)); b != nil {
		return b.Delete(key(name, version))
	}
	return nil
}
