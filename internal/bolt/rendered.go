package bolt

import (
	"context"

	"go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// renderedBucket: chart archive digest → what the archive renders with
// its default values (chartdiff.EncodeRendering's bytes; schema 18).
const renderedBucket = "rendered"

// renderedBuckets are created at open.
var renderedBuckets = []string{renderedBucket}

// Rendered implements chartctl.RenderedStore.
func (db *DB) Rendered(_ context.Context, digest string) ([]byte, error) {
	var out []byte
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, renderedBucket).Get([]byte(digest))
		if v == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "No rendering is kept for archive %s.", digest)
		}
		// bbolt's value is valid only inside the transaction.
		out = append([]byte(nil), v...)
		return nil
	})
	return out, wrap("read rendering", err)
}

// RenderedDigests implements chartctl.RenderedStore.
func (db *DB) RenderedDigests(context.Context) ([]string, error) {
	var out []string
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, renderedBucket).ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, wrap("list renderings", err)
}

// PruneRendered implements chartctl.RenderedStore: a record goes when no
// record refers to its archive (as BlobReferenced answers).
func (db *DB) PruneRendered(ctx context.Context) (int, error) {
	n := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		refs := bucket(tx, blobRefsBucket)
		b := bucket(tx, renderedBucket)
		var gone [][]byte
		if err := b.ForEach(func(k, _ []byte) error {
			if refCount(refs, string(k)) == 0 && !ociBlobLinked(tx, string(k)) {
				gone = append(gone, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		// Deleting while iterating would skip keys.
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(gone)
		return nil
	})
	return n, wrap("prune renderings", err)
}
