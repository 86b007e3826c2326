package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Rendered implements chartctl.RenderedStore.
func (db *DB) Rendered(ctx context.Context, digest string) ([]byte, error) {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "No rendering is kept for archive %s.", digest)
	if !storable(digest) {
		return nil, notFound
	}
	var out []byte
	err := db.pool.QueryRow(ctx, `SELECT data FROM rendered_manifests WHERE digest = $1`, digest).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound
	}
	return out, db.wrap("read rendering", err)
}

// RenderedDigests implements chartctl.RenderedStore.
func (db *DB) RenderedDigests(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT digest FROM rendered_manifests`)
	if err != nil {
		return nil, db.wrap("list renderings", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, db.wrap("list renderings", err)
}

// PruneRendered implements chartctl.RenderedStore: a row goes when no
// record refers to its archive (as BlobReferenced answers).
func (db *DB) PruneRendered(ctx context.Context) (int, error) {
	var n int64
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM rendered_manifests r
			WHERE NOT EXISTS (SELECT 1 FROM blob_refs b WHERE b.digest = r.digest)
			AND NOT EXISTS (SELECT 1 FROM oci_blob_links l WHERE l.digest = r.digest)`)
		n = tag.RowsAffected()
		return err
	})
	return int(n), db.wrap("prune renderings", err)
}
