package bolt

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB implements chartctl.OCIStore.
var _ chartctl.OCIStore = (*DB)(nil)

// The OCI registry's buckets (CONTRACT §11). Keys are joined with sep; OCI
// names, tags and digests never contain NUL (they are validated).
const (
	// ociManifestsBucket: name sep digest → ociManifestRecord (without the
	// manifest bytes).
	ociManifestsBucket = "oci_manifests"
	// ociManifestContentBucket: name sep digest → the manifest's bytes.
	ociManifestContentBucket = "oci_manifest_content"
	// ociTagsBucket: name sep tag → manifest digest.
	ociTagsBucket = "oci_tags"
	// ociReferrersBucket: name sep subject digest sep manifest digest →
	// nothing; the referrers index.
	ociReferrersBucket = "oci_referrers"
	// ociBlobLinksBucket: name sep blob digest → ociBlobLinkRecord; the
	// blobs a name holds (readable only there).
	ociBlobLinksBucket = "oci_blob_links"
	// ociBlobNamesBucket: blob digest sep name → nothing; mirrors
	// ociBlobLinksBucket so the names holding a blob are one prefix scan.
	ociBlobNamesBucket = "oci_blob_names"
	// ociBlobUsesBucket: name sep blob digest → how many manifests of name
	// refer to the blob, as a big-endian uint64 (absent when none).
	ociBlobUsesBucket = "oci_blob_uses"
	// ociChartsBucket: repository sep chart name sep version → OCI name
	// sep manifest digest; the manifests that are chart versions.
	ociChartsBucket = "oci_charts"
	// ociUploadsBucket: upload session ID → ociUploadRecord.
	ociUploadsBucket = "oci_uploads"
	// ociTagDigestsBucket: name sep manifest digest sep tag → nothing;
	// mirrors ociTagsBucket so a manifest's tags are one prefix scan, not
	// a walk of every tag of its name.
	ociTagDigestsBucket = "oci_tag_digests"
	// ociChartAlternatesBucket: repository sep chart name sep version sep
	// manifest digest → OCI name; the alternate manifests of chart
	// versions (decision 10), so finding a version's is one prefix scan,
	// not a walk of every manifest of its chart.
	ociChartAlternatesBucket = "oci_chart_alternates"
	// ociArtifactsBucket: name sep manifest digest → nothing; the
	// manifests that are not chart versions (OCI artifacts: images,
	// signatures, SBOMs), so counting a repository's OCI bytes for its
	// quota reads those, not every chart version's manifest.
	ociArtifactsBucket = "oci_artifacts"
)

var ociBuckets = []string{
	ociManifestsBucket, ociManifestContentBucket, ociTagsBucket, ociReferrersBucket,
	ociBlobLinksBucket, ociBlobNamesBucket, ociBlobUsesBucket, ociChartsBucket, ociUploadsBucket,
	ociTagDigestsBucket, ociChartAlternatesBucket, ociArtifactsBucket,
}

type ociManifestRecord struct {
	Name         string            `json:"name"`
	Digest       string            `json:"digest"`
	MediaType    string            `json:"media_type"`
	ArtifactType string            `json:"artifact_type,omitempty"`
	Subject      string            `json:"subject,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Blobs        []string          `json:"blobs,omitempty"`
	Manifests    []string          `json:"manifests,omitempty"`
	Chart        *ociChartRecord   `json:"chart,omitempty"`
	// Alternate: see chartctl.OCIManifest.Alternate. Such a record is not
	// in ociChartsBucket.
	Alternate bool      `json:"alternate,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

type ociChartRecord struct {
	Repository string `json:"repository"`
	Name       string `json:"name"`
	Version    string `json:"version"`
}

type ociBlobLinkRecord struct {
	Size     int64     `json:"size"`
	LinkedAt time.Time `json:"linked_at"`
}

type ociUploadRecord struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// RepositoryID is the ID of the repository Name belongs to (schema
	// 6); DeleteRepository deletes the sessions bound to it.
	RepositoryID string    `json:"repository_id,omitempty"`
	Offset       int64     `json:"offset"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func (r *ociManifestRecord) domain(content []byte) *chartctl.OCIManifest {
	m := &chartctl.OCIManifest{
		Name: r.Name, Digest: r.Digest, MediaType: r.MediaType, ArtifactType: r.ArtifactType,
		Subject: r.Subject, Annotations: maps.Clone(r.Annotations), Blobs: slices.Clone(r.Blobs), Manifests: slices.Clone(r.Manifests),
		Content: bytes.Clone(content), Alternate: r.Alternate, CreatedAt: r.CreatedAt,
	}
	if r.Chart != nil {
		m.Chart = &chartctl.OCIChartRef{Repository: r.Chart.Repository, Name: r.Chart.Name, Version: r.Chart.Version}
	}
	return m
}

func (r *ociUploadRecord) domain() *chartctl.OCIUpload {
	return &chartctl.OCIUpload{ID: r.ID, Name: r.Name, RepositoryID: r.RepositoryID, Offset: r.Offset, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// LinkBlob records that name holds the blob digest of size bytes.
func (db *DB) LinkBlob(ctx context.Context, name, digest string, size int64) error {
	return wrap("link blob", db.linkBlobs([]chartctl.OCIBlobLink{{Name: name, Digest: digest, Size: size}}))
}

// LinkBlobs links each of links, in one transaction.
func (db *DB) LinkBlobs(ctx context.Context, links []chartctl.OCIBlobLink) error {
	return wrap("link blobs", db.linkBlobs(links))
}

func (db *DB) linkBlobs(links []chartctl.OCIBlobLink) error {
	now := db.now()
	return db.db.Update(func(tx *bbolt.Tx) error {
		for _, l := range links {
			v, err := encode(&ociBlobLinkRecord{Size: l.Size, LinkedAt: now})
			if err != nil {
				return err
			}
			if err := bucket(tx, ociBlobLinksBucket).Put(key(l.Name, l.Digest), v); err != nil {
				return err
			}
			if err := bucket(tx, ociBlobNamesBucket).Put(key(l.Digest, l.Name), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// BlobLink returns the link of digest in name, or ENOTFOUND. The link is
// shared: callers must not modify it. Like TaggedManifest, it is kept
// until the next write (commitMemos, internal/epochmemo).
func (db *DB) BlobLink(ctx context.Context, name, digest string) (*chartctl.OCIBlobLink, error) {
	commits := db.db.commits.Load()
	if l, ok := db.memos.links.Get(nameKey{Name: name, Ref: digest}, commits); ok {
		return l, nil
	}
	var l *chartctl.OCIBlobLink
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, ociBlobLinksBucket).Get(key(name, digest))
		if v == nil {
			return blobUnknown()
		}
		r, err := decode[ociBlobLinkRecord](v)
		if err != nil {
			return err
		}
		l = &chartctl.OCIBlobLink{Name: strings.Clone(name), Digest: strings.Clone(digest), Size: r.Size, LinkedAt: r.LinkedAt}
		return nil
	})
	if err != nil {
		return nil, wrap("get blob link", err)
	}
	db.memos.links.Put(nameKey{Name: l.Name, Ref: l.Digest}, commits, l)
	return l, nil
}

// BlobNames returns the names that hold digest, sorted.
func (db *DB) BlobNames(ctx context.Context, digest string) ([]string, error) {
	var names []string
	err := db.db.View(func(tx *bbolt.Tx) error {
		return scanPrefix(bucket(tx, ociBlobNamesBucket), prefix(digest), func(k, _ []byte) error {
			names = append(names, string(k[len(digest)+1:]))
			return nil
		})
	})
	return names, wrap("list blob names", err)
}

// UnlinkBlob removes digest from name, or returns ENOTFOUND if it was not
// linked there.
func (db *DB) UnlinkBlob(ctx context.Context, name, digest string) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		links := bucket(tx, ociBlobLinksBucket)
		if links.Get(key(name, digest)) == nil {
			return blobUnknown()
		}
		return unlinkBlob(tx, name, digest)
	})
	return wrap("unlink blob", err)
}

func unlinkBlob(tx *bbolt.Tx, name, digest string) error {
	if err := bucket(tx, ociBlobLinksBucket).Delete(key(name, digest)); err != nil {
		return err
	}
	return bucket(tx, ociBlobNamesBucket).Delete(key(digest, name))
}

// UnreferencedLinks returns the blob links older than before that no
// manifest of their name refers to.
func (db *DB) UnreferencedLinks(ctx context.Context, before time.Time) ([]*chartctl.OCIBlobLink, error) {
	var out []*chartctl.OCIBlobLink
	err := db.db.View(func(tx *bbolt.Tx) error {
		uses := bucket(tx, ociBlobUsesBucket)
		return bucket(tx, ociBlobLinksBucket).ForEach(func(k, v []byte) error {
			if refCount(uses, string(k)) > 0 {
				return nil
			}
			r, err := decode[ociBlobLinkRecord](v)
			if err != nil {
				return err
			}
			if !r.LinkedAt.Before(before) {
				return nil
			}
			name, digest, _ := strings.Cut(string(k), sep)
			out = append(out, &chartctl.OCIBlobLink{Name: name, Digest: digest, Size: r.Size, LinkedAt: r.LinkedAt})
			return nil
		})
	})
	return out, wrap("list unreferenced blobs", err)
}

// PutManifest stores m and points tag at it. The blobs and manifests m
// refers to must be present in m.Name (*chartctl.UnknownReferenceError
// otherwise); a chart manifest replaces the one stored for the same
// version.
func (db *DB) PutManifest(ctx context.Context, m *chartctl.OCIManifest, tag string) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error { return db.storeManifest(tx, m, tag) })
	return wrap("put manifest", err)
}

// storeManifest is PutManifest in tx.
func (db *DB) storeManifest(tx *bbolt.Tx, m *chartctl.OCIManifest, tag string) error {
	links := bucket(tx, ociBlobLinksBucket)
	for _, d := range m.Blobs {
		if links.Get(key(m.Name, d)) == nil {
			return &chartctl.UnknownReferenceError{Digest: d}
		}
	}
	manifests := bucket(tx, ociManifestsBucket)
	for _, d := range m.Manifests {
		if manifests.Get(key(m.Name, d)) == nil {
			return &chartctl.UnknownReferenceError{Digest: d, Manifest: true}
		}
	}
	k := key(m.Name, m.Digest)
	if v := manifests.Get(k); v != nil {
		r, err := decode[ociManifestRecord](v)
		if err != nil {
			return err
		}
		m.CreatedAt = r.CreatedAt
	} else {
		if m.CreatedAt.IsZero() {
			m.CreatedAt = db.now()
		}
		put := func() error { return putManifest(tx, m) }
		if m.Chart == nil {
			// A chart version's quota is checked where the version is
			// stored (charge); any other manifest counts as OCI bytes.
			if err := withOCIQuota(tx, m.Name, put); err != nil {
				return err
			}
		} else if err := put(); err != nil {
			return err
		}
	}
	if tag != "" {
		return putTag(tx, m.Name, tag, m.Digest)
	}
	return nil
}

// putTag points tag of name at digest, keeping the tag index.
func putTag(tx *bbolt.Tx, name, tag, digest string) error {
	tags, byDigest := bucket(tx, ociTagsBucket), bucket(tx, ociTagDigestsBucket)
	if old := tags.Get(key(name, tag)); old != nil && string(old) != digest {
		if err := byDigest.Delete(key(name, string(old), tag)); err != nil {
			return err
		}
	}
	if err := tags.Put(key(name, tag), []byte(digest)); err != nil {
		return err
	}
	return byDigest.Put(key(name, digest, tag), nil)
}

// deleteTag removes tag of name, and its entry in the tag index.
func deleteTag(tx *bbolt.Tx, name, tag string) error {
	tags := bucket(tx, ociTagsBucket)
	d := tags.Get(key(name, tag))
	if d == nil {
		return tagUnknown(tag)
	}
	if err := bucket(tx, ociTagDigestsBucket).Delete(key(name, string(d), tag)); err != nil {
		return err
	}
	return tags.Delete(key(name, tag))
}

// putManifest writes a new manifest record with its indexes.
func putManifest(tx *bbolt.Tx, m *chartctl.OCIManifest) error {
	rec := &ociManifestRecord{
		Name: m.Name, Digest: m.Digest, MediaType: m.MediaType, ArtifactType: m.ArtifactType,
		Subject: m.Subject, Annotations: m.Annotations, Blobs: m.Blobs, Manifests: m.Manifests,
		CreatedAt: m.CreatedAt,
	}
	if m.Chart != nil && m.Alternate {
		// Beside the version's first manifest, not in its place.
		rec.Chart = &ociChartRecord{Repository: m.Chart.Repository, Name: m.Chart.Name, Version: m.Chart.Version}
		rec.Alternate = true
		ak := key(m.Chart.Repository, m.Chart.Name, m.Chart.Version, m.Digest)
		if err := bucket(tx, ociChartAlternatesBucket).Put(ak, []byte(m.Name)); err != nil {
			return err
		}
	} else if m.Chart != nil {
		rec.Chart = &ociChartRecord{Repository: m.Chart.Repository, Name: m.Chart.Name, Version: m.Chart.Version}
		charts := bucket(tx, ociChartsBucket)
		ck := key(m.Chart.Repository, m.Chart.Name, m.Chart.Version)
		if old := charts.Get(ck); old != nil {
			name, digest, _ := strings.Cut(string(old), sep)
			if err := deleteManifest(tx, name, digest); err != nil {
				return err
			}
		}
		if err := charts.Put(ck, key(m.Name, m.Digest)); err != nil {
			return err
		}
	} else if err := bucket(tx, ociArtifactsBucket).Put(key(m.Name, m.Digest), nil); err != nil {
		return err
	}
	v, err := encode(rec)
	if err != nil {
		return err
	}
	k := key(m.Name, m.Digest)
	if err := bucket(tx, ociManifestsBucket).Put(k, v); err != nil {
		return err
	}
	if err := bucket(tx, ociManifestContentBucket).Put(k, m.Content); err != nil {
		return err
	}
	uses := bucket(tx, ociBlobUsesBucket)
	for _, d := range uniq(m.Blobs) {
		if err := addRef(uses, string(key(m.Name, d))); err != nil {
			return err
		}
	}
	if m.Subject != "" {
		return bucket(tx, ociReferrersBucket).Put(key(m.Name, m.Subject, m.Digest), nil)
	}
	return nil
}

// deleteManifest removes a manifest, its tags, its referrers entry, its
// blob uses and its chart entry; a missing manifest is ENOTFOUND.
func deleteManifest(tx *bbolt.Tx, name, digest string) error {
	k := key(name, digest)
	manifests := bucket(tx, ociManifestsBucket)
	v := manifests.Get(k)
	if v == nil {
		return manifestUnknown()
	}
	r, err := decode[ociManifestRecord](v)
	if err != nil {
		return err
	}
	if err := manifests.Delete(k); err != nil {
		return err
	}
	if err := bucket(tx, ociManifestContentBucket).Delete(k); err != nil {
		return err
	}
	uses := bucket(tx, ociBlobUsesBucket)
	for _, d := range uniq(r.Blobs) {
		if _, err := dropRef(uses, string(key(name, d))); err != nil {
			return err
		}
	}
	if r.Subject != "" {
		if err := bucket(tx, ociReferrersBucket).Delete(key(name, r.Subject, digest)); err != nil {
			return err
		}
	}
	if r.Chart != nil && r.Alternate {
		ak := key(r.Chart.Repository, r.Chart.Name, r.Chart.Version, digest)
		if err := bucket(tx, ociChartAlternatesBucket).Delete(ak); err != nil {
			return err
		}
	} else if r.Chart != nil {
		charts := bucket(tx, ociChartsBucket)
		ck := key(r.Chart.Repository, r.Chart.Name, r.Chart.Version)
		if bytes.Equal(charts.Get(ck), k) {
			if err := charts.Delete(ck); err != nil {
				return err
			}
		}
	} else if err := bucket(tx, ociArtifactsBucket).Delete(k); err != nil {
		return err
	}
	var tags []string
	pfx := key(name, digest, "")
	if err := scanPrefix(bucket(tx, ociTagDigestsBucket), pfx, func(tk, _ []byte) error {
		tags = append(tags, string(tk[len(pfx):]))
		return nil
	}); err != nil {
		return err
	}
	for _, tag := range tags {
		if err := deleteTag(tx, name, tag); err != nil {
			return err
		}
	}
	return nil
}

// Manifest returns the manifest with digest in name, or ENOTFOUND.
func (db *DB) Manifest(ctx context.Context, name, digest string) (*chartctl.OCIManifest, error) {
	var m *chartctl.OCIManifest
	err := db.db.View(func(tx *bbolt.Tx) error {
		var err error
		m, err = getManifest(tx, name, digest)
		return err
	})
	return m, wrap("get manifest", err)
}

func getManifest(tx *bbolt.Tx, name, digest string) (*chartctl.OCIManifest, error) {
	r, content, err := getManifestRecord(tx, name, digest)
	if err != nil {
		return nil, err
	}
	return r.domain(content), nil
}

// getManifestRecord returns the record of manifest digest in name and its
// content, which is valid for the life of tx only.
func getManifestRecord(tx *bbolt.Tx, name, digest string) (*ociManifestRecord, []byte, error) {
	k := key(name, digest)
	v := bucket(tx, ociManifestsBucket).Get(k)
	if v == nil {
		return nil, nil, manifestUnknown()
	}
	r, err := manifests.decode(k, v)
	if err != nil {
		return nil, nil, err
	}
	return r, bucket(tx, ociManifestContentBucket).Get(k), nil
}

// Tag returns the digest tag points to in name, or ENOTFOUND.
func (db *DB) Tag(ctx context.Context, name, tag string) (string, error) {
	var d string
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, ociTagsBucket).Get(key(name, tag))
		if v == nil {
			return tagUnknown(tag)
		}
		d = string(v)
		return nil
	})
	return d, wrap("get tag", err)
}

// TaggedManifest returns the manifest tag points to in name, from one
// read transaction, or ENOTFOUND. The manifest is shared: callers must
// not modify it.
//
// An answer is kept with the count of commits to the file before it was
// read, and given again, without a transaction, while the count is the
// same (commitMemos, internal/epochmemo): the file has not changed in between, so the answer
// is what the lookups would find. A GET of a manifest by tag then skips
// a transaction, three bucket lookups, two reads and the record's copy
// (issue #32's profiles of manifest GETs).
func (db *DB) TaggedManifest(ctx context.Context, name, tag string) (*chartctl.OCIManifest, error) {
	commits := db.db.commits.Load()
	if m, ok := db.memos.tagged.Get(nameKey{Name: name, Ref: tag}, commits); ok {
		return m, nil
	}
	var m *chartctl.OCIManifest
	err := db.db.View(func(tx *bbolt.Tx) error {
		d := bucket(tx, ociTagsBucket).Get(key(name, tag))
		if d == nil {
			return tagUnknown(tag)
		}
		r, content, err := getManifestRecord(tx, name, string(d))
		if err != nil {
			return err
		}
		m = r.domain(content)
		return nil
	})
	if err != nil {
		return nil, wrap("get tagged manifest", err)
	}
	db.memos.tagged.Put(nameKey{Name: name, Ref: tag}, commits, m)
	return m, nil
}

// Tags returns name's tags in lexical order after last, at most n (all
// when n < 0), and whether more follow.
func (db *DB) Tags(ctx context.Context, name, last string, n int) ([]string, bool, error) {
	tags := []string{}
	more := false
	err := db.db.View(func(tx *bbolt.Tx) error {
		pfx := prefix(name)
		c := bucket(tx, ociTagsBucket).Cursor()
		start := pfx
		if last != "" {
			start = key(name, last)
		}
		for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, pfx); k, _ = c.Next() {
			t := string(k[len(pfx):])
			if last != "" && t <= last {
				continue
			}
			if n >= 0 && len(tags) == n {
				more = true
				break
			}
			tags = append(tags, t)
		}
		return nil
	})
	return tags, more, wrap("list tags", err)
}

// DeleteManifest deletes the manifest with digest in name and its tags.
func (db *DB) DeleteManifest(ctx context.Context, name, digest string) (*chartctl.OCIManifest, error) {
	var m *chartctl.OCIManifest
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if m, err = getManifest(tx, name, digest); err != nil {
			return err
		}
		return deleteManifest(tx, name, digest)
	})
	return m, wrap("delete manifest", err)
}

// DeleteTag deletes one tag, or returns ENOTFOUND.
func (db *DB) DeleteTag(ctx context.Context, name, tag string) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error { return deleteTag(tx, name, tag) })
	return wrap("delete tag", err)
}

// Referrers returns the manifests of name whose subject is digest.
func (db *DB) Referrers(ctx context.Context, name, digest string) ([]*chartctl.OCIManifest, error) {
	var out []*chartctl.OCIManifest
	err := db.db.View(func(tx *bbolt.Tx) error {
		pfx := key(name, digest, "")
		return scanPrefix(bucket(tx, ociReferrersBucket), pfx, func(k, _ []byte) error {
			m, err := getManifest(tx, name, string(k[len(pfx):]))
			if err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	})
	return out, wrap("list referrers", err)
}

// ChartManifest returns the manifest pushed over OCI for a chart version,
// or ENOTFOUND.
func (db *DB) ChartManifest(ctx context.Context, repo, name, version string) (*chartctl.OCIManifest, error) {
	var m *chartctl.OCIManifest
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, ociChartsBucket).Get(key(repo, name, version))
		if v == nil {
			return manifestUnknown()
		}
		n, d, _ := strings.Cut(string(v), sep)
		var err error
		m, err = getManifest(tx, n, d)
		return err
	})
	return m, wrap("get chart manifest", err)
}

// ChartAlternates implements chartctl.OCIStore: the alternates of a
// version, from the alternates index (ociChartAlternatesBucket).
func (db *DB) ChartAlternates(ctx context.Context, repo, name, version string) ([]string, error) {
	var out []string
	err := db.db.View(func(tx *bbolt.Tx) error {
		out = chartAlternates(tx, repo, name, version)
		return nil
	})
	return out, wrap("list chart alternates", err)
}

// chartAlternates returns the digests of a version's alternate manifests,
// sorted (the index's order).
func chartAlternates(tx *bbolt.Tx, repo, name, version string) []string {
	var out []string
	pfx := key(repo, name, version, "")
	_ = scanPrefix(bucket(tx, ociChartAlternatesBucket), pfx, func(k, _ []byte) error {
		out = append(out, string(k[len(pfx):]))
		return nil
	})
	return out
}

// Names returns every name holding a manifest or a blob, sorted.
func (db *DB) Names(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	err := db.db.View(func(tx *bbolt.Tx) error {
		// One seek per name, not one step per manifest or blob: a name
		// with 100,000 manifests costs what a name with one does.
		for _, b := range []string{ociManifestsBucket, ociBlobLinksBucket} {
			for _, name := range distinctFirstParts(bucket(tx, b)) {
				seen[name] = true
			}
		}
		return nil
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, wrap("list names", err)
}

// CreateUpload stores a new upload session.
func (db *DB) CreateUpload(ctx context.Context, u *chartctl.OCIUpload) error {
	now := db.now()
	if u.CreatedAt.IsZero() {
		u.CreatedAt = now
	}
	u.UpdatedAt = now
	err := db.db.Update(func(tx *bbolt.Tx) error {
		return putUpload(tx, u)
	})
	return wrap("create upload", err)
}

func putUpload(tx *bbolt.Tx, u *chartctl.OCIUpload) error {
	v, err := encode(&ociUploadRecord{ID: u.ID, Name: u.Name, RepositoryID: u.RepositoryID, Offset: u.Offset, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt})
	if err != nil {
		return err
	}
	return bucket(tx, ociUploadsBucket).Put([]byte(u.ID), v)
}

func getUpload(tx *bbolt.Tx, id string) (*chartctl.OCIUpload, error) {
	v := bucket(tx, ociUploadsBucket).Get([]byte(id))
	if v == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Upload session not found.")
	}
	r, err := decode[ociUploadRecord](v)
	if err != nil {
		return nil, err
	}
	return r.domain(), nil
}

// Upload returns session id, or ENOTFOUND.
func (db *DB) Upload(ctx context.Context, id string) (*chartctl.OCIUpload, error) {
	var u *chartctl.OCIUpload
	err := db.db.View(func(tx *bbolt.Tx) error {
		var err error
		u, err = getUpload(tx, id)
		return err
	})
	return u, wrap("get upload", err)
}

// AdvanceUpload moves session id's offset from "from" to "to".
func (db *DB) AdvanceUpload(ctx context.Context, id string, from, to int64) error {
	err := db.db.Update(func(tx *bbolt.Tx) error {
		u, err := getUpload(tx, id)
		if err != nil {
			return err
		}
		if u.Offset != from {
			return chartctl.Errorf(chartctl.ECONFLICT, "The upload is at offset %d, not %d.", u.Offset, from)
		}
		u.Offset = to
		u.UpdatedAt = db.now()
		return putUpload(tx, u)
	})
	return wrap("advance upload", err)
}

// DeleteUpload deletes session id, or returns ENOTFOUND.
func (db *DB) DeleteUpload(ctx context.Context, id string) error {
	err := db.db.Update(func(tx *bbolt.Tx) error {
		b := bucket(tx, ociUploadsBucket)
		if b.Get([]byte(id)) == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Upload session not found.")
		}
		return b.Delete([]byte(id))
	})
	return wrap("delete upload", err)
}

// Uploads returns every session, oldest first.
func (db *DB) Uploads(ctx context.Context) ([]*chartctl.OCIUpload, error) {
	var out []*chartctl.OCIUpload
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, ociUploadsBucket).ForEach(func(_, v []byte) error {
			r, err := decode[ociUploadRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, wrap("list uploads", err)
}

// ociBlobLinked reports whether any OCI name holds digest; chart records
// and OCI links together decide whether a blob is referenced.
func ociBlobLinked(tx *bbolt.Tx, digest string) bool {
	k, _ := bucket(tx, ociBlobNamesBucket).Cursor().Seek(prefix(digest))
	return k != nil && bytes.HasPrefix(k, prefix(digest))
}

// deleteOCIChart removes the manifests stored for a chart version, if
// any: the one in ociChartsBucket and its alternates, which live under the
// chart's OCI name, repo/name.
func deleteOCIChart(tx *bbolt.Tx, repo, name, version string) error {
	for _, d := range chartAlternates(tx, repo, name, version) {
		if err := deleteManifest(tx, repo+"/"+name, d); err != nil {
			return err
		}
	}
	v := bucket(tx, ociChartsBucket).Get(key(repo, name, version))
	if v == nil {
		return nil
	}
	n, d, _ := strings.Cut(string(v), sep)
	return deleteManifest(tx, n, d)
}

// deleteOCIRepo removes every manifest, tag, link and upload session of the
// names under repository repo, returning the blob digests it unlinked.
func deleteOCIRepo(tx *bbolt.Tx, repo string) ([]string, error) {
	inRepo := func(k []byte) bool {
		name, _, _ := strings.Cut(string(k), sep)
		return name == repo || strings.HasPrefix(name, repo+"/")
	}
	var unlinked []string
	for _, b := range []string{ociManifestsBucket, ociManifestContentBucket, ociTagsBucket, ociTagDigestsBucket, ociReferrersBucket,
		ociBlobLinksBucket, ociBlobUsesBucket, ociChartAlternatesBucket, ociArtifactsBucket} {
		bk := bucket(tx, b)
		var gone [][]byte
		if err := scanPrefix(bk, []byte(repo), func(k, _ []byte) error {
			if inRepo(k) {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return nil, err
		}
		for _, k := range gone {
			if b == ociBlobLinksBucket {
				name, digest, _ := strings.Cut(string(k), sep)
				if err := bucket(tx, ociBlobNamesBucket).Delete(key(digest, name)); err != nil {
					return nil, err
				}
				unlinked = append(unlinked, digest)
			}
			if err := bk.Delete(k); err != nil {
				return nil, err
			}
		}
	}
	charts := bucket(tx, ociChartsBucket)
	var gone [][]byte
	if err := scanPrefix(charts, prefix(repo), func(k, _ []byte) error {
		gone = append(gone, bytes.Clone(k))
		return nil
	}); err != nil {
		return nil, err
	}
	for _, k := range gone {
		if err := charts.Delete(k); err != nil {
			return nil, err
		}
	}
	return unlinked, nil
}

// deleteRepoUploads deletes the upload sessions bound to repository repo
// (by its ID; by name for a record not bound yet). Their bytes are left to
// garbage collection, which removes session data without a record.
func deleteRepoUploads(tx *bbolt.Tx, repo *repoRecord) error {
	_, err := deleteMatching(bucket(tx, ociUploadsBucket), func(_ []byte, u ociUploadRecord) bool {
		return u.RepositoryID == repo.ID || (u.RepositoryID == "" && ociRepoOf(u.Name) == repo.Name)
	})
	return err
}

// ociRepoOf returns the repository an OCI name belongs to: its first path
// component.
func ociRepoOf(name string) string {
	repo, _, _ := strings.Cut(name, "/")
	return repo
}

func uniq(ds []string) []string {
	seen := map[string]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func blobUnknown() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Blob not found.") }

func manifestUnknown() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Manifest not found.") }

func tagUnknown(tag string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Tag %q not found.", tag)
}
