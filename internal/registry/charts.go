package registry

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// Charts are charts (CONTRACT §11): a chart version of repository R is the
// manifest R/<chart name>:<version, '+' written '_'>. A chart pushed over
// OCI is stored through the application layer (Charts), so it passes the
// validation and overwrite rules of /v1 and shows in index.yaml; its
// manifest is kept as pushed. A version uploaded by /v1 or the ChartMuseum
// API has a manifest derived from its record: the config is the chart's
// metadata as stored, the layer the archive (and the provenance file), so
// the same chart gives the same manifest digest on every server and after
// every restart, and `helm pull oci://` returns the uploaded bytes.

// Helm's media types.
const (
	MediaTypeHelmConfig     = "application/vnd.cncf.helm.config.v1+json"
	MediaTypeHelmChart      = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	MediaTypeHelmProvenance = "application/vnd.cncf.helm.chart.provenance.v1.prov"
	// mediaTypeHelmLegacyChart is the chart layer of Helm before 3.8.
	mediaTypeHelmLegacyChart = "application/tar+gzip"
)

// isChart reports whether a manifest is a Helm chart.
func isChart(doc *manifestDoc) bool {
	return doc != nil && doc.Config != nil && doc.Config.MediaType == MediaTypeHelmConfig
}

// chartPath splits an OCI name into repository and chart name when it has
// exactly two components, the only place a chart lives.
func chartPath(name string) (repo, chartName string, ok bool) {
	repo, chartName, ok = strings.Cut(name, "/")
	return repo, chartName, ok && !strings.Contains(chartName, "/")
}

// versionTag returns the OCI tag of a chart version.
func versionTag(version string) string { return chartctl.VersionTag(version) }

// tagVersion returns the chart version of an OCI tag.
func tagVersion(tag string) string { return chartctl.TagVersion(tag) }

// pushChart stores a pushed Helm chart manifest as a chart version.
func (r *Registry) pushChart(ctx context.Context, p *chartctl.Principal, repo *chartctl.Repository, man *chartctl.OCIManifest, doc *manifestDoc, tag string) error {
	repoName, chartName, ok := chartPath(man.Name)
	if !ok || repoName != repo.Name {
		return errDenied("A Helm chart is pushed to %s/<chart name> (helm push CHART.tgz oci://HOST/%s), not to %s.", repo.Name, repo.Name, man.Name)
	}
	if stored, err := r.OCI.Manifest(ctx, man.Name, man.Digest); err == nil && stored.Chart != nil {
		// The same manifest again (clients push by digest, then tag it):
		// the chart version is stored; only the tag may be new.
		want := versionTag(stored.Chart.Version)
		if tag != "" && tag != want {
			return errManifestInvalid("The chart's version is %s, so its tag is %q, not %q.", stored.Chart.Version, want, tag)
		}
		if stored.Alternate {
			// The tag names the version's first manifest.
			return nil
		}
		// Helm pushes a chart by digest and then tags it; the first PUT
		// tagged it already, so the second changes nothing and writes
		// nothing.
		if d, err := r.OCI.Tag(ctx, man.Name, want); err == nil && d == man.Digest {
			return nil
		} else if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
		// A held version's tag is not stored: tags/list leaves it out
		// until the release, when the version's own tag lists it (the
		// tag resolves through the version meanwhile, for its pusher).
		if cv, err := r.chartVersion(ctx, repo.Name, stored.Chart.Name, stored.Chart.Version); err == nil && cv.Held() {
			return nil
		} else if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
		// Its blobs were checked when it was stored, and they stay while
		// the version refers to them (a blob of a chart version cannot be
		// deleted on its own), so the blob store is not asked again.
		man.Chart = stored.Chart
		return r.storeManifest(ctx, man, want)
	} else if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return err
	}
	if done, err := r.pushAlternate(ctx, repo, man, doc, tag); done || err != nil {
		return err
	}
	if err := r.storedBlobs(ctx, man); err != nil {
		return err
	}
	var chartLayer, provLayer *ocispec.Descriptor
	for i, l := range doc.Layers {
		switch l.MediaType {
		case MediaTypeHelmChart, mediaTypeHelmLegacyChart:
			if chartLayer != nil {
				return errManifestInvalid("A chart manifest has exactly one chart layer.")
			}
			chartLayer = &doc.Layers[i]
		case MediaTypeHelmProvenance:
			if provLayer != nil {
				return errManifestInvalid("A chart manifest has at most one provenance layer.")
			}
			provLayer = &doc.Layers[i]
		default:
			return errManifestInvalid("Unexpected layer media type %q in a chart manifest.", l.MediaType)
		}
	}
	if chartLayer == nil {
		return errManifestInvalid("A chart manifest needs a %s layer.", MediaTypeHelmChart)
	}
	if err := r.linkedBlobs(ctx, man); err != nil {
		return err
	}
	// Through the application layer's memory: the layer was most often
	// just pushed, and will be pulled.
	archive, err := r.App.OpenBlob(ctx, chartLayer.Digest.String())
	if err != nil {
		return err
	}
	defer archive.Close()
	var prov io.Reader
	if provLayer != nil {
		pb, err := r.Blobs.Open(ctx, provLayer.Digest.String())
		if err != nil {
			return err
		}
		defer pb.Close()
		prov = pb
	}
	return r.storeChart(ctx, repo, man, chartName, tag, chartLayer.Digest.String(), archive, prov)
}

// linkedBlobs answers MANIFEST_BLOB_UNKNOWN for the first blob man refers
// to that is not linked to its name. The links are asked together (on
// PostgreSQL a round trip each), but not those this process committed
// itself just before (freshLink): the version's transaction checks every
// link again (chartctl.UnknownReferenceError), so asking first only
// answers sooner, and a link of this name keeps the layer this name's.
func (r *Registry) linkedBlobs(ctx context.Context, man *chartctl.OCIManifest) error {
	return firstUnknownBlob(man, func(d string) error {
		if r.freshLink(man.Name, d) {
			return nil
		}
		_, err := r.OCI.BlobLink(ctx, man.Name, d)
		return err
	})
}

// pushAlternate stores a chart manifest pushed over OCI for a version
// uploaded by /v1 or the ChartMuseum API with the same archive: Helm's HEAD
// requests found the version's blobs (its archive, provenance file and
// derived config) at the name and skipped them, and its manifest, whose
// digest differs from the derived one, must then be the idempotent success
// a re-push is within one protocol. The version keeps both manifests
// (CONTRACT §18 decision 10): Helm's is stored as an alternate, found by
// its digest, while the tag keeps naming the first, derived one. The
// blobs Helm skipped are linked to the name (the derived config written
// to the blob store first), as a pushed manifest's blobs are. It reports
// false, storing nothing, when the manifest is not such a re-push.
func (r *Registry) pushAlternate(ctx context.Context, repo *chartctl.Repository, man *chartctl.OCIManifest, doc *manifestDoc, tag string) (bool, error) {
	var archive string
	for _, l := range doc.Layers {
		if l.MediaType == MediaTypeHelmChart || l.MediaType == mediaTypeHelmLegacyChart {
			archive = l.Digest.String()
		}
	}
	if archive == "" {
		return false, nil
	}
	cv, err := r.digestVersion(ctx, man.Name, archive, kindArchive)
	if cv == nil || err != nil {
		return false, err
	}
	// Only beside a derived first manifest: a version pushed over OCI
	// already has Helm's, and another is an overwrite (storeChart).
	if _, err := r.storedChartManifest(ctx, cv.Repository, cv.Name, cv.Version); err == nil {
		return false, nil
	} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return false, err
	}
	for _, l := range doc.Layers {
		if d := l.Digest.String(); d != cv.Digest && d != cv.ProvDigest {
			// Other layers than the version's: not the same chart.
			return false, nil
		}
	}
	if want := versionTag(cv.Version); tag != "" && tag != want {
		return false, errManifestInvalid("The chart's version is %s, so its tag is %q, not %q.", cv.Version, want, tag)
	}
	for _, d := range man.Blobs {
		if _, err := r.OCI.BlobLink(ctx, man.Name, d); err == nil {
			continue
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return false, err
		}
		cb := matchChartBlob(cv, d)
		if cb == nil {
			return false, errManifestBlobUnknown("blob", d)
		}
		if err := r.linkChartBlob(ctx, man.Name, d, cb); err != nil {
			return false, err
		}
	}
	if err := r.storedBlobs(ctx, man); err != nil {
		return false, err
	}
	man.Chart = &chartctl.OCIChartRef{Repository: cv.Repository, Name: cv.Name, Version: cv.Version}
	man.Alternate = true
	return true, r.storeManifest(r.App.Record(ctx, "manifest.push", man.Name+"@"+man.Digest, repo.Organization), man, "")
}

// linkChartBlob links blob d of a chart version (cb) to name, writing it
// to the blob store first when it is a derived config, under a claim of
// the digest so no garbage collection removes it between.
func (r *Registry) linkChartBlob(ctx context.Context, name, d string, cb *chartBlobRef) error {
	release, err := r.App.ClaimDigests(ctx, d)
	if err != nil {
		return err
	}
	defer release()
	if cb.data != nil {
		bw, err := r.Blobs.CreateAlgorithm(ctx, string(digest.SHA256))
		if err != nil {
			return err
		}
		defer bw.Abort()
		if _, err := bw.Write(cb.data); err != nil {
			return err
		}
		if _, err := bw.Commit(); err != nil {
			return err
		}
	}
	b, err := r.Blobs.Open(ctx, d)
	if err != nil {
		return err
	}
	size := b.Size()
	_ = b.Close()
	return r.OCI.LinkBlob(ctx, name, d, size)
}

// storeChart reads the chart archive (blob layer, open as archive) and the
// provenance file of a push through the application layer, as /v1 reads
// an upload, checks it is the
// chart and version the push names, and stores it as a chart version of
// repo with man, its manifest, in one transaction. A chart manifest always
// carries the tag of its version, also when it was pushed by digest. Over
// OCI a push to an existing tag is a forced upload: it replaces the
// version only on a server started with --allow-overwrite.
func (r *Registry) storeChart(ctx context.Context, repo *chartctl.Repository, man *chartctl.OCIManifest, chartName, tag, layer string, archive chartctl.Blob, prov io.Reader) error {
	u, err := r.App.ReceiveStoredArchive(ctx, layer, archive)
	if err != nil {
		return chartError(err)
	}
	if u.Chart.Name != chartName {
		return r.App.Reject(u, errManifestInvalid("The chart in this manifest is %q, but it was pushed to %s/%s; push it to %s/%s.", u.Chart.Name, repo.Name, chartName, repo.Name, u.Chart.Name))
	}
	if want := versionTag(u.Chart.Version); tag != "" && want != tag {
		return r.App.Reject(u, errManifestInvalid("The chart's version is %s, so its tag is %q, not %q.", u.Chart.Version, want, tag))
	}
	if prov != nil {
		if err := r.App.ReceiveProv(ctx, u, prov); err != nil {
			return chartError(r.App.Reject(u, err))
		}
	}
	_, _, err = r.App.PutChart(ctx, repo, u, app.PutOptions{Force: true, Manifest: man, Tag: versionTag(u.Chart.Version)})
	// Whatever happened, a tag or manifest may now be there.
	r.absent.forget()
	if err != nil {
		return chartError(err)
	}
	return nil
}

// chartError maps an error of the chart write path to the registry's.
func chartError(err error) error {
	if e := unknownReference(err); e != nil {
		return e
	}
	msg := chartctl.ErrorMessage(err)
	switch chartctl.ErrorCode(err) {
	case chartctl.ECONFLICT:
		return errDenied("%s", msg)
	case chartctl.EINVALID:
		return errManifestInvalid("%s", msg)
	case chartctl.ETOOLARGE:
		return newError(http.StatusRequestEntityTooLarge, CodeSizeInvalid, "%s", msg)
	}
	return err
}

// deleteChart deletes the chart version a manifest stands for (the store
// deletes its OCI manifest in the same transaction).
func (r *Registry) deleteChart(ctx context.Context, repo *chartctl.Repository, ref *chartctl.OCIChartRef) error {
	_, err := r.App.DeleteChart(ctx, repo, ref.Name, ref.Version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return errManifestUnknown(ref.Version)
	}
	return err
}

// chartVersion returns one chart version of repository repo through the
// application layer, which keeps the records it read recently (and forgets
// them when they change through it). Returns ENOTFOUND, also for an
// invalid chart name or version. The version is the application layer's
// shared record (it is looked up on every manifest and chart blob GET):
// read it, never modify it.
func (r *Registry) chartVersion(ctx context.Context, repo, chartName, version string) (*chartctl.ChartVersion, error) {
	return r.App.SharedChartVersion(ctx, repo, chartName, version)
}

// chartVersions returns the versions of the chart an OCI name stands for
// (none when the name is not <repository>/<chart>).
func (r *Registry) chartVersions(ctx context.Context, name string) ([]*chartctl.ChartVersion, error) {
	repo, chartName, ok := chartPath(name)
	if !ok || chart.ValidateName(chartName) != nil {
		return nil, nil
	}
	// Held versions too: their manifests resolve for those who may push
	// (so a signer can sign them) and their blobs are known, to be
	// refused (heldManifest, handleBlob).
	cvs, err := r.App.Store.ChartVersions(ctx, repo, chartctl.ChartFilter{Name: chartName, IncludeHeld: true})
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, nil
	}
	return cvs, err
}

// chartManifest returns the manifest of a chart version: the one pushed
// over OCI if any, else the derived one.
func (r *Registry) chartManifest(ctx context.Context, name string, cv *chartctl.ChartVersion) (*chartctl.OCIManifest, []byte, error) {
	stored, err := r.storedChartManifest(ctx, cv.Repository, cv.Name, cv.Version)
	if err == nil {
		return stored, nil, nil
	} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return nil, nil, err
	}
	return r.deriveManifest(ctx, name, cv)
}

// deriveManifest returns the manifest and config of a chart version
// uploaded over /v1, from the cache when it was derived before (a derived
// manifest depends only on immutable facts of the version, which the key
// holds).
func (r *Registry) deriveManifest(ctx context.Context, name string, cv *chartctl.ChartVersion) (*chartctl.OCIManifest, []byte, error) {
	key := strings.Join([]string{cv.Repository, cv.Name, cv.Version, cv.Digest, cv.ProvDigest}, "\x00")
	if d, ok := r.derived.get(key); ok {
		return d.manifest, d.config, nil
	}
	m, config, err := r.buildManifest(ctx, name, cv)
	if err != nil {
		return nil, nil, err
	}
	r.derived.put(key, derivedEntry{m, config})
	return m, config, nil
}

// buildManifest builds the manifest and config of a chart version uploaded
// over /v1. Only stored, immutable facts of the version enter it.
func (r *Registry) buildManifest(ctx context.Context, name string, cv *chartctl.ChartVersion) (*chartctl.OCIManifest, []byte, error) {
	config := derivedConfig(cv)
	m := ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config: ocispec.Descriptor{
			MediaType: MediaTypeHelmConfig, Digest: digest.SHA256.FromBytes(config), Size: int64(len(config)),
		},
		Layers: []ocispec.Descriptor{{MediaType: MediaTypeHelmChart, Digest: digest.Digest(cv.Digest), Size: cv.Size}},
		Annotations: map[string]string{
			ocispec.AnnotationTitle:   cv.Name,
			ocispec.AnnotationVersion: cv.Version,
		},
	}
	if cv.ProvDigest != "" {
		b, err := r.Blobs.Open(ctx, cv.ProvDigest)
		if err != nil {
			return nil, nil, err
		}
		size := b.Size()
		_ = b.Close()
		m.Layers = append(m.Layers, ocispec.Descriptor{MediaType: MediaTypeHelmProvenance, Digest: digest.Digest(cv.ProvDigest), Size: size})
	}
	content, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	blobs := []string{m.Config.Digest.String()}
	for _, l := range m.Layers {
		blobs = append(blobs, l.Digest.String())
	}
	return &chartctl.OCIManifest{
		Name: name, Digest: digest.SHA256.FromBytes(content).String(), MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: MediaTypeHelmConfig, Annotations: m.Annotations, Blobs: blobs, Content: content,
		Chart:     &chartctl.OCIChartRef{Repository: cv.Repository, Name: cv.Name, Version: cv.Version},
		CreatedAt: cv.CreatedAt,
	}, config, nil
}

// chartManifestByTag returns the manifest of the chart version a tag
// names, nil when there is none.
func (r *Registry) chartManifestByTag(ctx context.Context, name, tag string) (*chartctl.OCIManifest, error) {
	repo, chartName, ok := chartPath(name)
	if !ok {
		return nil, nil
	}
	// An invalid chart name or version is not found (the application
	// layer checks them before reading the store).
	cv, err := r.chartVersion(ctx, repo, chartName, tagVersion(tag))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	m, _, err := r.chartManifest(ctx, name, cv)
	return m, err
}

// chartManifestByDigest returns the derived manifest of a chart version of
// name whose digest is d, nil when there is none. (Manifests pushed over
// OCI are stored, and found before this.)
func (r *Registry) chartManifestByDigest(ctx context.Context, name, d string) (*chartctl.OCIManifest, error) {
	cv, err := r.digestVersion(ctx, name, d, kindManifest)
	if cv == nil || err != nil {
		return nil, err
	}
	m, _, err := r.deriveManifest(ctx, name, cv)
	if err != nil || m.Digest != d {
		return nil, err
	}
	return m, nil
}

// digestVersion returns the chart version of name that has digest d as a
// digest of kind (the chart digest index, chartdigests.go), nil when
// none has. The version is the application layer's shared record
// (chartVersion): read it, never modify it.
func (r *Registry) digestVersion(ctx context.Context, name, d string, kinds ...digestKind) (*chartctl.ChartVersion, error) {
	repo, chartName, ok := chartPath(name)
	if !ok {
		return nil, nil
	}
	vd, ok, err := r.digests.lookup(ctx, r, name, d)
	if !ok || err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, vd.kind) {
		return nil, nil
	}
	cv, err := r.chartVersion(ctx, repo, chartName, vd.version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, nil
	}
	return cv, err
}

// chartTags returns the tags of the chart versions of name in lexical
// order after last, at most n (all when n < 0), and whether more follow,
// from the store's tag index (no version record is read).
func (r *Registry) chartTags(ctx context.Context, name, last string, n int) ([]string, bool, error) {
	repo, chartName, ok := chartPath(name)
	if !ok || chart.ValidateName(chartName) != nil {
		return nil, false, nil
	}
	tags, more, err := r.App.Store.ChartTags(ctx, repo, chartName, last, n)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, false, nil
	}
	return tags, more, err
}

// chartBlobRef is a blob that belongs to a chart version of a name.
type chartBlobRef struct {
	chart *chartctl.ChartVersion
	// data holds a derived config, which is not in the blob store.
	data []byte
	size int64
}

// chartBlob finds d among the blobs of the chart versions of name: their
// archives and provenance files (in the blob store), and their derived
// configs (computed). It returns nil when d is none of them. A pushed
// chart's config is a blob linked to the name, found before this.
func (r *Registry) chartBlob(ctx context.Context, name, d string) (*chartBlobRef, error) {
	cv, err := r.digestVersion(ctx, name, d, kindArchive, kindProvenance, kindConfig)
	if cv == nil || err != nil {
		return nil, err
	}
	return matchChartBlob(cv, d), nil
}

// matchChartBlob returns cv's blob d, nil when cv has no blob d.
func matchChartBlob(cv *chartctl.ChartVersion, d string) *chartBlobRef {
	switch d {
	case cv.Digest:
		return &chartBlobRef{chart: cv, size: cv.Size}
	case cv.ProvDigest:
		return &chartBlobRef{chart: cv, size: -1}
	case configDigest(cv):
		config := derivedConfig(cv)
		return &chartBlobRef{chart: cv, data: config, size: int64(len(config))}
	}
	return nil
}

// configDigest returns the digest of a chart version's derived config.
func configDigest(cv *chartctl.ChartVersion) string {
	return digest.SHA256.FromBytes(derivedConfig(cv)).String()
}

// chartManifestBlob returns the chart version of name whose manifest
// pushed over OCI refers to blob d, nil when none does.
func (r *Registry) chartManifestBlob(ctx context.Context, name, d string) (*chartctl.ChartVersion, error) {
	cvs, err := r.chartVersions(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, cv := range cvs {
		m, err := r.OCI.ChartManifest(ctx, cv.Repository, cv.Name, cv.Version)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		for _, b := range m.Blobs {
			if b == d {
				return cv, nil
			}
		}
	}
	return nil, nil
}

// derivedConfig returns the config of a chart version's derived manifest:
// the chart's metadata JSON as stored.
func derivedConfig(cv *chartctl.ChartVersion) []byte {
	if len(cv.Metadata) == 0 {
		return []byte("{}")
	}
	return []byte(cv.Metadata)
}

// chartNames returns the OCI names of every chart (for the catalog); chart
// names that are not valid OCI names are left out. The store lists charts,
// not versions, so this costs the same at 300 and 100,000 versions.
func (r *Registry) chartNames(ctx context.Context) ([]string, error) {
	all, err := r.App.Store.ChartNames(ctx)
	if err != nil {
		return nil, err
	}
	names := all[:0]
	for _, n := range all {
		if chartctl.ValidOCIName(n) {
			names = append(names, n)
		}
	}
	return names, nil
}

// derivedEntry is a derived manifest with its config.
type derivedEntry struct {
	manifest *chartctl.OCIManifest
	config   []byte
}

// derivedCache keeps derived manifests, so resolving a digest among a
// chart's versions costs map lookups. It forgets everything when full.
type derivedCache struct {
	mu sync.Mutex
	m  map[string]derivedEntry
}

// maxDerived bounds the cache (a derived manifest is well under 1 KiB plus
// the chart's metadata).
const maxDerived = 20000

func (c *derivedCache) get(key string) (derivedEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e, ok
}

func (c *derivedCache) put(key string, e derivedEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxDerived {
		c.m = map[string]derivedEntry{}
	}
	c.m[key] = e
}

// heldManifest returns nil when p may pull manifest man: any manifest but
// a held chart version's, which only those who may push to its repository
// see (CONTRACT §18: so a signer can sign it). Others are told the
// manifest is unknown, as for one that does not exist.
func (r *Registry) heldManifest(ctx context.Context, p *chartctl.Principal, man *chartctl.OCIManifest, ref string) error {
	if man.Chart == nil {
		return nil
	}
	cv, err := r.chartVersion(ctx, man.Chart.Repository, man.Chart.Name, man.Chart.Version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if r.App.VisibleVersion(ctx, p, cv) != nil {
		return errManifestUnknown(ref)
	}
	return nil
}
