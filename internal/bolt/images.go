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

// SaveImages implements chartctl.ImagesStore.
func (db *DB) SaveImages(ctx context.Context, found []chartctl.FoundImages) (int, error) {
	for _, f := range found {
		if f.Digest == "" {
			return 0, chartctl.Invalid("digest", "A digest is required.")
		}
		if err := validateChartKey(f.Name, f.Version); err != nil {
			return 0, err
		}
	}
	saved := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		for _, f := range found {
			if f.Rendered != nil {
				if err := bucket(tx, renderedBucket).Put([]byte(f.Digest), f.Rendered); err != nil {
					return err
				}
			}
			if f.Images == nil {
				continue
			}
			_, err := editChartRecord(tx, f.Repository, f.Name, f.Version, f.Digest, "its images were being found", func(rec *chartRecord) { rec.Images = newImagesRecord(f.Images) })
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			saved++
		}
		return nil
	})
	return saved, wrap("save images", err)
}
