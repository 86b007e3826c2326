package chartctl

import (
	"context"
	"time"
)

// Where a chart version's image list comes from (CONTRACT §18
// "Discovery", decision 9).
const (
	// ImagesAnnotation: Chart.yaml's artifacthub.io/images annotation.
	ImagesAnnotation = "annotation"
	// ImagesRendered: found in the manifests the chart renders with its
	// default values.
	ImagesRendered = "rendered"
	// ImagesUnrenderable: the chart could not be rendered without a
	// cluster, failed to render or passed the rendering bounds; the
	// record's Error says why.
	ImagesUnrenderable = "unrenderable"
	// ImagesPending: not extracted yet (the background job has not come
	// to the version). Never stored: a version without a record is
	// pending.
	ImagesPending = "pending"
)

// Images is the record of the images a chart version deploys, extracted
// after the version was stored (never on the write path, decision 9).
type Images struct {
	// Images are normalized references (docker.io/library/nginx:1.25),
	// sorted, without duplicates.
	Images []string
	// Source is ImagesAnnotation, ImagesRendered or ImagesUnrenderable.
	Source string
	// Error says why the chart is unrenderable ("" otherwise).
	Error string
	// KubeVersion is the Kubernetes version the chart was rendered for
	// ("" for the annotation).
	KubeVersion string
	// CheckedAt is when the record was computed.
	CheckedAt time.Time
}

// ImagesStore keeps chart versions' image records.
type ImagesStore interface {
	// SetImages records img for the version of repo whose archive digest
	// is digest. Returns ENOTFOUND if the version does not exist or holds
	// another archive by now (it was replaced while being rendered).
	SetImages(ctx context.Context, repo, name, version, digest string, img *Images) error
}

// RenderedStore keeps what each chart archive renders with its default
// values (issue #33), so a diff reads it instead of rendering: the
// background images job writes one record per archive, keyed by the
// archive's digest (the rendering depends only on the archive). The
// records are derived data: they are not in backups, and the job renders
// the versions without one again (after a restore, an upgrade, or a
// record pruned).
type RenderedStore interface {
	// SetRendered keeps data (chartdiff.EncodeRendering's bytes) for the
	// archive with digest, replacing any record it had.
	SetRendered(ctx context.Context, digest string, data []byte) error
	// Rendered returns the record kept for the archive with digest.
	// Returns ENOTFOUND if none.
	Rendered(ctx context.Context, digest string) ([]byte, error)
	// RenderedDigests returns the digests of the archives with a record,
	// in no particular order.
	RenderedDigests(ctx context.Context) ([]string, error)
	// PruneRendered deletes the records of archives no stored record
	// refers to any more (BlobReferenced is false) and returns how many
	// went.
	PruneRendered(ctx context.Context) (int, error)
}
