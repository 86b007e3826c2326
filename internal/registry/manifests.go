package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/artifacthub"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmrepo"
)

// Media types of the manifests the registry stores, besides the OCI ones
// of image-spec.
const (
	mediaTypeDockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
)

// manifestDoc is what the registry reads of any manifest it accepts: the
// fields of an OCI image manifest and index, which Docker schema 2
// manifests and lists share.
type manifestDoc struct {
	specs.Versioned
	MediaType    string               `json:"mediaType,omitempty"`
	ArtifactType string               `json:"artifactType,omitempty"`
	Config       *ocispec.Descriptor  `json:"config,omitempty"`
	Layers       []ocispec.Descriptor `json:"layers,omitempty"`
	Manifests    []ocispec.Descriptor `json:"manifests,omitempty"`
	Subject      *ocispec.Descriptor  `json:"subject,omitempty"`
	Annotations  map[string]string    `json:"annotations,omitempty"`
}

// handleManifest answers GET, HEAD, PUT and DELETE on
// /v2/<name>/manifests/<reference>, the reference being a tag or a digest.
func (r *Registry) handleManifest(c echo.Context, m pathMatch) error {
	w, req := c.Response(), c.Request()
	name, ref := m[1], m[2]
	switch req.Method {
	case http.MethodPut:
		return r.putManifest(c, name, ref)
	case http.MethodDelete:
		return r.deleteManifest(c, name, ref)
	}
	p, repo, err := r.authorize(c, name, actionPull)
	if err != nil {
		return err
	}
	stale, err := r.proxyManifest(req.Context(), repo, name, ref)
	if err != nil {
		return err
	}
	man, err := r.resolveManifest(req.Context(), name, ref)
	if err != nil {
		return err
	}
	if err := r.heldManifest(req.Context(), p, man, ref); err != nil {
		return err
	}
	mh := r.headers.get(man)
	h := w.Header()
	if stale {
		h.Set("Warning", helmrepo.StaleWarning)
	}
	h["Docker-Content-Digest"] = mh.digest
	h["Etag"] = mh.etag
	if match := req.Header.Get("If-None-Match"); match != "" && strings.Contains(match, man.Digest) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h["Content-Type"] = mh.contentType
	h["Content-Length"] = mh.length
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(man.Content)
	}
	return nil
}

// manifestHeader holds the header values of a manifest's answer,
// formatted once: a manifest's digest fixes its content, so they never
// change. They are shared by every answer: nothing may modify them
// (capacity equal to length, so an Add elsewhere copies).
type manifestHeader struct {
	digest, etag, contentType, length []string
}

// headerCache keeps the header values of the manifests served, by digest
// and media type (the same bytes may be stored under two media types). It
// starts over when full.
type headerCache struct {
	mu sync.Mutex
	m  map[[2]string]*manifestHeader
}

// get returns the header values of man's answer.
func (hc *headerCache) get(man *chartctl.OCIManifest) *manifestHeader {
	k := [2]string{man.Digest, man.MediaType}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if mh := hc.m[k]; mh != nil {
		return mh
	}
	one := func(v string) []string { return []string{v}[:1:1] }
	mh := &manifestHeader{digest: one(man.Digest), etag: one(`"` + man.Digest + `"`), contentType: one(man.MediaType), length: one(strconv.Itoa(len(man.Content)))}
	if hc.m == nil || len(hc.m) >= maxDerived {
		hc.m = map[[2]string]*manifestHeader{}
	}
	hc.m[k] = mh
	return mh
}

// resolveManifest finds the manifest ref (a tag or a digest) of name:
// stored ones first, then those derived from chart versions.
func (r *Registry) resolveManifest(ctx context.Context, name, ref string) (*chartctl.OCIManifest, error) {
	if strings.Contains(ref, ":") {
		d, err := parseDigest(ref)
		if err != nil {
			return nil, err
		}
		man, err := r.OCI.Manifest(ctx, name, d.String())
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return man, err
		}
		cm, err := r.chartManifestByDigest(ctx, name, d.String())
		if err != nil {
			return nil, err
		}
		if cm == nil {
			if cm, err = r.artifactHubManifest(ctx, name, d.String()); err != nil {
				return nil, err
			}
		}
		if cm == nil {
			return nil, errManifestUnknown(ref)
		}
		return cm, nil
	}
	if !chartctl.ValidOCITag(ref) {
		return nil, errManifestUnknown(ref)
	}
	man, err := r.taggedManifest(ctx, name, ref)
	if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return man, err
	}
	if ref == artifacthub.Tag {
		// Not a version's tag (a version has no "artifacthub.io"): the
		// repository's Artifact Hub metadata, when set.
		cm, err := r.artifactHubManifest(ctx, name, ref)
		if err != nil {
			return nil, err
		}
		if cm == nil {
			return nil, errManifestUnknown(ref)
		}
		return cm, nil
	}
	cm, err := r.chartManifestByTag(ctx, name, ref)
	if err != nil {
		return nil, err
	}
	if cm == nil {
		return nil, errManifestUnknown(ref)
	}
	return cm, nil
}

// putManifest answers PUT /v2/<name>/manifests/<reference>.
func (r *Registry) putManifest(c echo.Context, name, ref string) error {
	w, req := c.Response(), c.Request()
	p, repo, err := r.authorize(c, name, actionPush)
	if err != nil {
		return err
	}
	release, err := r.takeUpload(c, p)
	if err != nil {
		return err
	}
	defer release()
	body, err := io.ReadAll(io.LimitReader(req.Body, r.Config.MaxManifestSize+1))
	if err != nil {
		return newError(http.StatusBadRequest, CodeManifestInvalid, "The manifest could not be read completely.")
	}
	if int64(len(body)) > r.Config.MaxManifestSize {
		return newError(http.StatusRequestEntityTooLarge, CodeSizeInvalid, "The manifest exceeds the maximum size of %d bytes.", r.Config.MaxManifestSize)
	}
	var (
		dg  digest.Digest
		tag string
	)
	if strings.Contains(ref, ":") {
		if dg, err = parseDigest(ref); err != nil {
			return err
		}
		if got := dg.Algorithm().FromBytes(body); got != dg {
			return errDigestInvalid("The manifest has digest %s, not %s.", got, dg)
		}
	} else {
		if !chartctl.ValidOCITag(ref) {
			return newError(http.StatusBadRequest, CodeManifestInvalid, "Invalid tag %q: use up to 128 characters of a-z, A-Z, 0-9, '_', '.' and '-', not starting with '.' or '-'.", ref)
		}
		tag, dg = ref, digest.SHA256.FromBytes(body)
	}
	man, doc, err := parseManifest(req.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	man.Name, man.Digest, man.Content = name, dg.String(), body
	if isChart(doc) {
		c.Set(auditActionKey, "chart.push")
	}

	uploadRepo := ""
	if isChart(doc) {
		uploadRepo = repo.Name
	}
	if err := r.charge(c, p, uploadRepo); err != nil {
		return err
	}
	if isChart(doc) {
		if err := r.pushChart(req.Context(), p, repo, man, doc, tag); err != nil {
			return err
		}
	} else if err := r.storedBlobs(req.Context(), man); err != nil {
		return err
	} else if err := r.storeManifest(r.App.Record(req.Context(), "manifest.push", name+"@"+man.Digest, repo.Organization), man, tag); err != nil {
		return err
	} else if subject := signedSubject(man, tag); subject != "" {
		// A signature of a chart version may have arrived.
		r.verifySigned(req.Context(), name, subject)
	}
	h := w.Header()
	h.Set("Location", "/v2/"+name+"/manifests/"+dg.String())
	h.Set("Docker-Content-Digest", dg.String())
	if man.Subject != "" {
		h.Set("OCI-Subject", man.Subject)
	}
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// storeManifest stores man, answering a missing blob or manifest with
// MANIFEST_BLOB_UNKNOWN.
func (r *Registry) storeManifest(ctx context.Context, man *chartctl.OCIManifest, tag string) error {
	err := r.OCI.PutManifest(ctx, man, tag)
	// Whatever happened, a tag or manifest may now be there.
	r.absent.forget()
	if e := unknownReference(err); e != nil {
		return e
	}
	return err
}

// unknownReference returns the registry's MANIFEST_BLOB_UNKNOWN for a
// store's *chartctl.UnknownReferenceError, nil for any other error.
func unknownReference(err error) *Error {
	var ue *chartctl.UnknownReferenceError
	if !errors.As(err, &ue) {
		return nil
	}
	kind := "blob"
	if ue.Manifest {
		kind = "manifest"
	}
	return errManifestBlobUnknown(kind, ue.Digest)
}

// storedBlobs answers MANIFEST_BLOB_UNKNOWN for the first blob man refers
// to that the blob store does not have. The store checks that each is
// linked to the name; a link can outlive a blob that was never stored (a
// crash during its upload, see storeBlob), so the bytes are checked too,
// but for blobs this process has just committed (freshBlob).
func (r *Registry) storedBlobs(ctx context.Context, man *chartctl.OCIManifest) error {
	return firstUnknownBlob(man, func(d string) error {
		if r.freshBlob(d) {
			return nil
		}
		_, err := r.Blobs.ModTime(ctx, d)
		return err
	})
}

// firstUnknownBlob runs check on each blob man refers to, a few at a time
// (on S3 or PostgreSQL each check is a round trip), and answers
// MANIFEST_BLOB_UNKNOWN for the first, in the manifest's order, whose
// check found nothing (ENOTFOUND); another error is returned as it is.
func firstUnknownBlob(man *chartctl.OCIManifest, check func(d string) error) error {
	errs := make([]error, len(man.Blobs))
	var g errgroup.Group
	g.SetLimit(storedBlobChecks)
	for i, d := range man.Blobs {
		g.Go(func() error {
			errs[i] = check(d)
			return nil
		})
	}
	_ = g.Wait() // the errors are in errs, read in the manifest's order
	for i, err := range errs {
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return errManifestBlobUnknown("blob", man.Blobs[i])
		} else if err != nil {
			return err
		}
	}
	return nil
}

// freshBlob reports whether this process committed blob d (storeBlob)
// so recently that no collection can have deleted it since: neither the
// registry's, which spares blobs younger than GCGrace, nor the orphan
// sweep, which spares those younger than the application's grace
// (app.CommittedWithin).
func (r *Registry) freshBlob(d string) bool { return r.recent(r.App.CommittedAt(d)) }

// freshLink reports whether this process committed the link of blob d to
// name (storeBlob) as recently as freshBlob counts a blob's commit.
func (r *Registry) freshLink(name, d string) bool { return r.recent(r.App.LinkedAt(name, d)) }

// recent reports whether a commit at t (ok: there was one) is within the
// stricter grace period and the clock of the two collections.
func (r *Registry) recent(t time.Time, ok bool) bool {
	return ok && app.CommittedWithin(t, r.Now(), min(r.Config.GCGrace, r.App.BlobGrace()))
}

// storedBlobChecks is how many of a manifest's blobs storedBlobs checks at
// the same time.
const storedBlobChecks = 8

// parseManifest checks a pushed manifest and extracts what the store
// indexes. contentType is the request's Content-Type; a manifest without a
// mediaType field (Helm 4.3 pushes such image manifests) takes it from
// there, or from its shape.
func parseManifest(contentType string, body []byte) (*chartctl.OCIManifest, *manifestDoc, error) {
	var doc manifestDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, nil, errManifestInvalid("The manifest is not valid JSON.")
	}
	ct := ""
	if contentType != "" {
		if mt, _, err := mime.ParseMediaType(contentType); err == nil {
			ct = mt
		}
	}
	if ct == "application/json" || ct == "application/octet-stream" {
		ct = ""
	}
	mt := doc.MediaType
	switch {
	case mt != "" && ct != "" && mt != ct:
		return nil, nil, errManifestInvalid("The manifest's mediaType %q does not match its Content-Type %q.", mt, ct)
	case mt == "" && ct != "":
		mt = ct
	case mt == "" && doc.Config != nil:
		mt = ocispec.MediaTypeImageManifest
	case mt == "" && doc.Manifests != nil:
		mt = ocispec.MediaTypeImageIndex
	}
	if doc.SchemaVersion != 2 {
		return nil, nil, errManifestInvalid("Unsupported schemaVersion %d: only schema 2 manifests are accepted.", doc.SchemaVersion)
	}
	man := &chartctl.OCIManifest{MediaType: mt, ArtifactType: doc.ArtifactType, Annotations: doc.Annotations}
	switch mt {
	case ocispec.MediaTypeImageManifest, mediaTypeDockerManifest:
		if doc.Config == nil {
			return nil, nil, errManifestInvalid("An image manifest needs a config descriptor.")
		}
		if doc.Manifests != nil {
			return nil, nil, errManifestInvalid("An image manifest has no manifests field.")
		}
		if err := checkDescriptor(*doc.Config, "config"); err != nil {
			return nil, nil, err
		}
		man.Blobs = append(man.Blobs, doc.Config.Digest.String())
		for _, l := range doc.Layers {
			if err := checkDescriptor(l, "layers"); err != nil {
				return nil, nil, err
			}
			if nonDistributable(l.MediaType) {
				continue
			}
			man.Blobs = append(man.Blobs, l.Digest.String())
		}
		if man.ArtifactType == "" && mt == ocispec.MediaTypeImageManifest {
			man.ArtifactType = doc.Config.MediaType
		}
	case ocispec.MediaTypeImageIndex, mediaTypeDockerManifestList:
		if doc.Config != nil || doc.Layers != nil {
			return nil, nil, errManifestInvalid("An index has no config or layers.")
		}
		for _, d := range doc.Manifests {
			if err := checkDescriptor(d, "manifests"); err != nil {
				return nil, nil, err
			}
			man.Manifests = append(man.Manifests, d.Digest.String())
		}
	default:
		return nil, nil, errManifestInvalid("Unsupported manifest media type %q: push an OCI image manifest or index, or a Docker schema 2 manifest or manifest list.", mt)
	}
	if doc.Subject != nil {
		if err := checkDescriptor(*doc.Subject, "subject"); err != nil {
			return nil, nil, err
		}
		man.Subject = doc.Subject.Digest.String()
	}
	return man, &doc, nil
}

// checkDescriptor refuses a descriptor without a valid digest or media type.
func checkDescriptor(d ocispec.Descriptor, field string) error {
	if err := d.Digest.Validate(); err != nil {
		return errManifestInvalid("A descriptor in %s has an invalid digest %q.", field, d.Digest)
	}
	if d.Digest.Algorithm() != digest.SHA256 && d.Digest.Algorithm() != digest.SHA512 {
		return errManifestInvalid("A descriptor in %s uses the unsupported digest algorithm %q.", field, d.Digest.Algorithm())
	}
	if d.MediaType == "" {
		return errManifestInvalid("A descriptor in %s has no mediaType.", field)
	}
	if d.Size < 0 {
		return errManifestInvalid("A descriptor in %s has a negative size.", field)
	}
	return nil
}

// nonDistributable reports whether a layer media type marks content that
// registries do not hold (OCI non-distributable and Docker foreign layers).
func nonDistributable(mt string) bool {
	return strings.Contains(mt, ".nondistributable.") || strings.Contains(mt, ".foreign.")
}

// deleteManifest answers DELETE /v2/<name>/manifests/<reference>: a digest
// deletes the manifest and its tags (a chart's deletes the chart version),
// a tag deletes only the tag.
func (r *Registry) deleteManifest(c echo.Context, name, ref string) error {
	w, req := c.Response(), c.Request()
	p, repo, err := r.authorize(c, name, actionDelete)
	if err != nil {
		return err
	}
	if err := r.charge(c, p, ""); err != nil {
		return err
	}
	ctx := req.Context()
	if !strings.Contains(ref, ":") {
		if !chartctl.ValidOCITag(ref) {
			return errManifestUnknown(ref)
		}
		// A chart version's tag is the version itself: it goes with the
		// version (delete the manifest), never alone.
		if cm, err := r.chartManifestByTag(ctx, name, ref); err != nil {
			return err
		} else if cm != nil {
			c.Set(auditActionKey, "chart.delete")
			return errDenied("Tag %q is chart version %s; delete the chart version by its manifest digest %s.", ref, cm.Chart.Version, cm.Digest)
		}
		err := r.OCI.DeleteTag(r.App.Record(ctx, "manifest.delete", name+":"+ref, repo.Organization), name, ref)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return errManifestUnknown(ref)
		} else if err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	d, err := parseDigest(ref)
	if err != nil {
		return err
	}
	man, err := r.OCI.Manifest(ctx, name, d.String())
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		if man, err = r.chartManifestByDigest(ctx, name, d.String()); err != nil {
			return err
		}
		if man == nil {
			return errManifestUnknown(ref)
		}
	} else if err != nil {
		return err
	}
	if man.Chart != nil {
		c.Set(auditActionKey, "chart.delete")
		if err := r.deleteChart(ctx, repo, man.Chart); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	rctx := r.App.Record(ctx, "manifest.delete", name+"@"+d.String(), repo.Organization)
	if _, err := r.OCI.DeleteManifest(rctx, name, d.String()); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return errManifestUnknown(ref)
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
