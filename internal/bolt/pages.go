package bolt

import (
	"context"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// These methods keep internal/chartpage's rendered chart pages (JSON) by
// chart archive digest. They are not part of chartctl.Store;
// chartpage.Backend describes them.

// ChartPage returns the page rendered for the archive with chartDigest.
// Returns ENOTFOUND if none is kept.
func (db *DB) ChartPage(ctx context.Context, chartDigest string) ([]byte, error) {
	var page []byte
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, chartPagesBucket).Get([]byte(chartDigest))
		if v == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "No rendered page for this chart.")
		}
		page = append([]byte(nil), v...)
		return nil
	})
	return page, wrap("load chart page", err)
}

// SetChartPages keeps each page of pages as the page of the archive with
// its chart digest, replacing what was kept, in one transaction.
func (db *DB) SetChartPages(ctx context.Context, pages map[string][]byte) error {
	return wrap("store chart pages", db.db.Update(func(tx *bbolt.Tx) error {
		b := bucket(tx, chartPagesBucket)
		for d, page := range pages {
			if err := b.Put([]byte(d), page); err != nil {
				return err
			}
		}
		return nil
	}))
}

// DeleteChartPage drops the page of the archive with chartDigest; a
// missing one is not an error.
func (db *DB) DeleteChartPage(ctx context.Context, chartDigest string) error {
	return wrap("delete chart page", db.db.Update(func(tx *bbolt.Tx) error {
		return bucket(tx, chartPagesBucket).Delete([]byte(chartDigest))
	}))
}
