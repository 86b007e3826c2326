package bolt

import (
	"context"
	"time"

	"go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// imagesRecord is the optional "images" member of a chart record (issue
// #33): records written before it decode without it, as pending, so no
// schema upgrade rewrites them; the background job fills it in.
type imagesRecord struct {
	Images      []string  `json:"images,omitempty"`
	Source      string    `json:"source"`
	Error       string    `json:"error,omitempty"`
	KubeVersion string    `json:"kube_version,omitempty"`
	CheckedAt   time.Time `json:"checked_at"`
}

func newImagesRecord(img *chartctl.Images) *imagesRecord {
	if img == nil {
		return nil
	}
	return &imagesRecord{Images: img.Images, Source: img.Source, Error: img.Error, KubeVersion: img.KubeVersion, CheckedAt: img.CheckedAt}
}

func (r *imagesRecord) domain() *chartctl.Images {
	if r == nil {
		return nil
	}
	return &chartctl.Images{Images: r.Images, Source: r.Source, Error: r.Error, KubeVersion: r.KubeVersion, CheckedAt: r.CheckedAt}
}

// SetImages implements chartctl.ImagesStore.
func (db *DB) SetImages(ctx context.Context, repo, name, version, digest string, img *chartctl.Images) error {
	if err := validateChartKey(name, version); err != nil {
		return err
	}
	return wrap("set images", db.update(ctx, func(tx *bbolt.Tx) error {
		_, err := editChartRecord(tx, repo, name, version, digest, "its images were being found", func(rec *chartRecord) { rec.Images = newImagesRecord(img) })
		return err
	}))
}
