package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// imagesJSON is the images column of chart_versions; the names match
// bolt's record, so both stores read alike.
type imagesJSON struct {
	Images      []string  `json:"images,omitempty"`
	Source      string    `json:"source"`
	Error       string    `json:"error,omitempty"`
	KubeVersion string    `json:"kube_version,omitempty"`
	CheckedAt   time.Time `json:"checked_at"`
}

// encodeImages returns the column value for img: NULL for nil.
func encodeImages(img *chartctl.Images) ([]byte, error) {
	if img == nil {
		return nil, nil
	}
	return json.Marshal(imagesJSON{Images: img.Images, Source: img.Source, Error: img.Error, KubeVersion: img.KubeVersion, CheckedAt: img.CheckedAt.UTC()})
}

func decodeImages(b []byte) (*chartctl.Images, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var j imagesJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, err
	}
	return &chartctl.Images{Images: j.Images, Source: j.Source, Error: j.Error, KubeVersion: j.KubeVersion, CheckedAt: j.CheckedAt.UTC()}, nil
}

// SaveImages implements chartctl.ImagesStore, in one transaction and
// one round trip for its statements. Images are not part of the Helm
// index, so no generation moves: other replicas read the record again
// within their record cache's second.
func (db *DB) SaveImages(ctx context.Context, found []chartctl.FoundImages) (int, error) {
	b := &pgx.Batch{}
	var updates []bool // per queued statement: an image record's update
	for _, f := range found {
		if f.Digest == "" || !storable(f.Digest) {
			return 0, chartctl.Invalid("digest", "A digest is required.")
		}
		if f.Rendered != nil {
			b.Queue(`INSERT INTO rendered_manifests (digest, data) VALUES ($1, $2)
				ON CONFLICT (digest) DO UPDATE SET data = EXCLUDED.data, created_at = now()`, f.Digest, f.Rendered)
			updates = append(updates, false)
		}
		if f.Images == nil || !storable(f.Repository, f.Name, f.Version) {
			// A name PostgreSQL cannot hold names no stored version.
			continue
		}
		val, err := encodeImages(f.Images)
		if err != nil {
			return 0, err
		}
		b.Queue(`UPDATE chart_versions c SET images = $5
			FROM repositories r
			WHERE r.id = c.repository_id AND r.name = $1 AND c.name = $2 AND c.version = $3 AND c.digest = $4`,
			f.Repository, f.Name, f.Version, f.Digest, val)
		updates = append(updates, true)
	}
	if b.Len() == 0 {
		return 0, nil
	}
	saved := 0
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		res := tx.SendBatch(ctx, b)
		for _, update := range updates {
			tag, err := res.Exec()
			if err != nil {
				_ = res.Close()
				return err
			}
			if update && tag.RowsAffected() > 0 {
				saved++
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	})
	return saved, db.wrap("save images", err)
}
