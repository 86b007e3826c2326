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

// FoundImages is what the images job found for one stored version.
type FoundImages struct {
	// Repository, Name and Version name the version; Digest is the
	// archive it held when the job read it.
	Repository, Name, Version, Digest string
	// Images is the version's image record; nil stores none (the version
	// has one already, or stays pending).
	Images *Images
	// Rendered is what the archive renders with its default values
	// (chartdiff.EncodeRendering's bytes), kept under Digest; nil keeps
	// nothing.
	Rendered []byte
}

// ImagesStore keeps chart versions' image records.
type ImagesStore interface {
	// SaveImages stores what the images job found for several versions
	// in one transaction, so a backlog costs a commit per batch rather
	// than per version: each rendering under its archive's digest
	// (replacing any record it had), and each image record on its version
	// if the version still holds that archive. A version gone, or holding
	// another archive by now (replaced while being rendered), gets no
	// record and is no error. It returns how many image records it
	// stored.
	SaveImages(ctx context.Context, found []FoundImages) (int, error)
}

// RenderedStore keeps what each chart archive renders with its default
// values (issue #33), so a diff reads it instead of rendering: the
// background images job writes one record per archive (SaveImages),
// keyed by the archive's digest (the rendering depends only on the archive). The
// records are derived data: they are not in backups, and the job renders
// the versions without one again (after a restore, an upgrade, or a
// record pruned).
type RenderedStore interface {
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
