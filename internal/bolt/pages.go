package bolt

import (
	"context"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// These methods keep internal/chartpage's index: which blob holds the
// rendered web page of a chart archive. They are not part of
// chartctl.Store; chartpage.Index describes them.

// ChartPage returns the blob digest of the page rendered for the archive
// with chartDigest. Returns ENOTFOUND if none is recorded.
func (db *DB) ChartPage(ctx context.Context, chartDigest string) (string, error) {
	var page string
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, chartPagesBucket).Get([]byte(chartDigest))
		if v == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "No rendered page for this chart.")
		}
		page = string(v)
		return nil
	})
	return page, wrap("load chart page", err)
}

// SetChartPage records pageDigest as the page of the archive with
// chartDigest, replacing what was recorded.
func (db *DB) SetChartPage(ctx context.Context, chartDigest, pageDigest string) error {
	return wrap("store chart page", db.db.Update(func(tx *bbolt.Tx) error {
		return bucket(tx, chartPagesBucket).Put([]byte(chartDigest), []byte(pageDigest))
	}))
}

// DeleteChartPage forgets the page of the archive with chartDigest; a
// missing record is not an error.
func (db *DB) DeleteChartPage(ctx context.Context, chartDigest string) error {
	return wrap("delete chart page", db.db.Update(func(tx *bbolt.Tx) error {
		return bucket(tx, chartPagesBucket).Delete([]byte(chartDigest))
	}))
}
