package chartctl

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// This file holds the domain of the OCI registry (CONTRACT §11): manifests,
// tags, the referrers index, blob links and upload sessions. Blob bytes live
// in the BlobStore; an OCIStore keeps what refers to them.
//
// Names: an OCI repository name is "<repository>/<path>" or "<repository>",
// where <repository> is a chartctl Repository. Every method takes the full
// name; the store does not check the chartctl repository exists (the
// registry does, with its access rules).

// OCIManifest is a manifest stored under a repository name.
type OCIManifest struct {
	// Name is the OCI repository name, e.g. "team-charts/nginx".
	Name string
	// Digest addresses Content ("sha256:…" or "sha512:…").
	Digest string
	// MediaType is the manifest's media type, from the Content-Type of the
	// push or its mediaType field.
	MediaType string
	// ArtifactType is the artifactType of the manifest, or of an image
	// manifest without one the config's media type (the referrers API
	// reports it).
	ArtifactType string
	// Subject is the digest of the manifest's subject, "" when none.
	Subject string
	// Annotations are the manifest's annotations, for the referrers API.
	Annotations map[string]string
	// Blobs are the digests of the config and layers the manifest refers to,
	// which must be linked in Name.
	Blobs []string
	// Manifests are the digests of the manifests an index refers to, which
	// must be stored in Name.
	Manifests []string
	// Content is the manifest as pushed, byte for byte.
	Content []byte
	// Chart, when set, says the manifest is a chart version of Chart.Repository
	// (a Helm chart pushed over OCI); deleting one deletes the other.
	Chart *OCIChartRef
	// Alternate marks a second manifest of the chart version Chart: Helm's
	// own, pushed over OCI for a version uploaded by /v1, whose first
	// manifest is the derived one (CONTRACT §18 decision 10). It is found
	// by its digest; the version's tag and ChartManifest keep naming the
	// first, and deleting the version deletes it too.
	Alternate bool
	// CreatedAt is when it was first stored.
	CreatedAt time.Time
}

// OCIChartRef names the chart version a manifest stands for.
type OCIChartRef struct {
	Repository string
	Name       string
	Version    string
}

// Size returns the manifest's length in bytes.
func (m *OCIManifest) Size() int64 { return int64(len(m.Content)) }

// OCIUpload is a blob upload session. Its bytes accumulate in a file the
// registry keeps; the record says how many of them were acknowledged.
type OCIUpload struct {
	// ID is the session's unguessable identifier (its URL path part).
	ID string
	// Name is the OCI repository name the blob is uploaded to.
	Name string
	// RepositoryID is the ID of the chartctl repository Name belongs to
	// when the session started: the registry refuses to continue the
	// session once that repository is gone, even if another of the same
	// name exists by then, and DeleteRepository deletes the session's
	// record.
	RepositoryID string
	// Offset is the number of bytes acknowledged so far; bytes of the file
	// past it were never acknowledged and are discarded on resume.
	Offset int64
	// CreatedAt and UpdatedAt bound the session's life; an upload not
	// updated for the expiry period is abandoned.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// OCIBlobLink records that a repository name holds a blob.
type OCIBlobLink struct {
	Name   string
	Digest string
	Size   int64
	// LinkedAt is when the blob was (last) pushed or mounted to Name;
	// garbage collection spares links younger than its grace period.
	LinkedAt time.Time
}

// UnknownReferenceError is returned by OCIStore.PutManifest when the
// manifest refers to a blob that is not linked in its name or to a manifest
// that is not stored there.
type UnknownReferenceError struct {
	// Digest is the missing blob's or manifest's digest.
	Digest string
	// Manifest is true when a manifest (of an index) is missing.
	Manifest bool
}

// Error implements error.
func (e *UnknownReferenceError) Error() string {
	kind := "blob"
	if e.Manifest {
		kind = "manifest"
	}
	return fmt.Sprintf("unknown %s %s", kind, e.Digest)
}

// PutVersionOptions are the choices of a Store.PutChartVersion call.
type PutVersionOptions struct {
	// Overwrite lets other content replace a stored version.
	Overwrite bool
	// Manifest, when set, is the OCI manifest the version was pushed with.
	// Once the version is stored (created, or the same content found
	// stored), the manifest is stored in the same transaction as
	// OCIStore.PutManifest stores it, with Chart pointing at the version,
	// and tagged Tag: one commit for an OCI push instead of two, and never
	// a version without the manifest it was pushed with. A blob the
	// manifest refers to but its name does not hold is an
	// *UnknownReferenceError, and nothing is stored.
	Manifest *OCIManifest
	// Tag is the tag Manifest is stored under ("" for none).
	Tag string
}

// OCIStore keeps the registry's metadata. Every method is atomic.
type OCIStore interface {
	// LinkBlob records that name holds the blob digest of size bytes,
	// refreshing LinkedAt if linked. The registry writes a link while the
	// blob is being made durable, so a link left by a crash may name a blob
	// the BlobStore does not have; readers check the BlobStore.
	LinkBlob(ctx context.Context, name, digest string, size int64) error
	// LinkBlobs links each of links (Name, Digest, Size) as LinkBlob does,
	// in one write.
	LinkBlobs(ctx context.Context, links []OCIBlobLink) error
	// BlobLink returns the link of digest in name. Returns ENOTFOUND. The
	// link may be shared with other callers: it must not be modified.
	BlobLink(ctx context.Context, name, digest string) (*OCIBlobLink, error)
	// BlobNames returns the names that hold digest, sorted.
	BlobNames(ctx context.Context, digest string) ([]string, error)
	// UnlinkBlob removes digest from name, even if a manifest of name
	// refers to it (as registries do; the manifest then fails to pull that
	// blob). Returns ENOTFOUND if it was not linked there.
	UnlinkBlob(ctx context.Context, name, digest string) error
	// UnreferencedLinks returns the blob links older than before that no
	// manifest of their name refers to (garbage collection candidates).
	UnreferencedLinks(ctx context.Context, before time.Time) ([]*OCIBlobLink, error)

	// PutManifest stores m under m.Name and points tag (if not "") at it,
	// filling CreatedAt. Storing the same digest again keeps the first
	// record and only moves the tag. Returns *UnknownReferenceError if a
	// blob of m is not linked in m.Name or a manifest of m not stored there.
	PutManifest(ctx context.Context, m *OCIManifest, tag string) error
	// Manifest returns the manifest with digest in name. Returns ENOTFOUND.
	Manifest(ctx context.Context, name, digest string) (*OCIManifest, error)
	// Tag returns the digest tag points to in name. Returns ENOTFOUND.
	Tag(ctx context.Context, name, tag string) (string, error)
	// TaggedManifest returns the manifest tag points to in name, read at
	// once (a pull by tag's one store read). Returns ENOTFOUND. The
	// manifest may be shared with other callers: it must not be modified.
	TaggedManifest(ctx context.Context, name, tag string) (*OCIManifest, error)
	// Tags returns name's tags in lexical order after last ("" from the
	// start), at most n of them (all when n < 0), and whether more follow.
	// The page may be shared with other callers: it must not be modified.
	Tags(ctx context.Context, name, last string, n int) (tags []string, more bool, err error)
	// DeleteManifest deletes the manifest with digest in name and every tag
	// pointing to it, returning the deleted record. Returns ENOTFOUND.
	DeleteManifest(ctx context.Context, name, digest string) (*OCIManifest, error)
	// DeleteTag deletes one tag, leaving the manifest. Returns ENOTFOUND.
	DeleteTag(ctx context.Context, name, tag string) error
	// Referrers returns the manifests in name whose subject is digest,
	// ordered by digest.
	Referrers(ctx context.Context, name, digest string) ([]*OCIManifest, error)
	// ChartManifest returns the manifest stored for a chart version, if the
	// version was pushed over OCI. Returns ENOTFOUND.
	ChartManifest(ctx context.Context, repo, name, version string) (*OCIManifest, error)
	// ChartAlternates returns the digests of a chart version's alternate
	// manifests (decision 10), sorted; none is not an error.
	ChartAlternates(ctx context.Context, repo, name, version string) ([]string, error)
	// Names returns every name holding a manifest or a blob, sorted.
	Names(ctx context.Context) ([]string, error)

	// CreateUpload stores a new upload session, filling CreatedAt and
	// UpdatedAt.
	CreateUpload(ctx context.Context, u *OCIUpload) error
	// Upload returns the session id. Returns ENOTFOUND.
	Upload(ctx context.Context, id string) (*OCIUpload, error)
	// AdvanceUpload moves session id's Offset from "from" to "to" and
	// refreshes UpdatedAt. Returns ENOTFOUND, or ECONFLICT if the stored
	// offset is not "from" (a concurrent chunk got there first).
	AdvanceUpload(ctx context.Context, id string, from, to int64) error
	// DeleteUpload deletes session id. Returns ENOTFOUND.
	DeleteUpload(ctx context.Context, id string) error
	// Uploads returns every session, oldest first.
	Uploads(ctx context.Context) ([]*OCIUpload, error)
}

// AlgorithmBlobStore is a BlobStore that can address blobs by digest
// algorithms other than sha256.
type AlgorithmBlobStore interface {
	BlobStore
	// CreateAlgorithm starts a new blob hashed with algorithm ("sha256" or
	// "sha512"). Returns EINVALID for an algorithm the store does not know.
	CreateAlgorithm(ctx context.Context, algorithm string) (BlobWriter, error)
}

// ValidOCIName reports whether name is a valid OCI repository name
// (components of [a-z0-9] joined by '.', '_', '__' or dashes, separated by
// '/', 255 characters at most): the distribution specification's
// [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*,
// checked in one pass (every registry request checks a name).
func ValidOCIName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for {
		c, rest, more := strings.Cut(name, "/")
		if !validOCIComponent(c) {
			return false
		}
		if !more {
			return true
		}
		name = rest
	}
}

// validOCIComponent reports whether c matches [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*.
func validOCIComponent(c string) bool {
	i := 0
	for {
		start := i
		for i < len(c) && isLowerAlnum(c[i]) {
			i++
		}
		if i == start {
			return false // empty, or a separator first or doubled
		}
		if i == len(c) {
			return true
		}
		start = i
		for i < len(c) && !isLowerAlnum(c[i]) {
			i++
		}
		if sep := c[start:i]; sep != "." && sep != "_" && sep != "__" && strings.Trim(sep, "-") != "" {
			return false
		}
	}
}

func isLowerAlnum(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// ValidOCITag reports whether tag is a valid OCI tag:
// [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}.
func ValidOCITag(tag string) bool {
	if tag == "" || len(tag) > 128 {
		return false
	}
	for i := 0; i < len(tag); i++ {
		b := tag[i]
		switch {
		case isLowerAlnum(b), b >= 'A' && b <= 'Z', b == '_':
		case (b == '.' || b == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// VersionTag returns the OCI tag of a chart version: the version with
// '+' written '_', since tags may not hold '+' (as Helm pushes them).
// SemVer versions hold no '_', so the mapping is one to one.
func VersionTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// TagVersion returns the chart version an OCI tag stands for (VersionTag's
// inverse).
func TagVersion(tag string) string { return strings.ReplaceAll(tag, "_", "+") }
