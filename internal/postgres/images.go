package postgres

import (
	"context"
	"encoding/json"
	"time"

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

// SetImages implements chartctl.ImagesStore. Images are not part of the
// Helm index, so no generation moves: other replicas read the record
// again within their record cache's second.
func (db *DB) SetImages(ctx context.Context, repo, name, version, digest string, img *chartctl.Images) error {
	if !storable(repo, name, version, digest) {
		return chartNotFound(repo, name, version)
	}
	val, err := encodeImages(img)
	if err != nil {
		return err
	}
	err = db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `UPDATE chart_versions c SET images = $5
			FROM repositories r
			WHERE r.id = c.repository_id AND r.name = $1 AND c.name = $2 AND c.version = $3 AND c.digest = $4`,
			repo, name, version, digest, val)
		if err == nil && tag.RowsAffected() == 0 {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q, or replaced while its images were being found.", name, version, repo)
		}
		return err
	})
	return db.wrap("set images", err)
}
