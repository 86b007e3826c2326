package proxy

// This file serves proxy repositories of an OCI upstream (oci://HOST/PATH,
// CONTRACT §18 "Federation"). The OCI registry asks EnsureManifest before
// it reads a manifest of such a repository: on a miss the manifest of
// HOST/PATH/<chart> is fetched with internal/ociclient (token challenges,
// Basic auth, anonymous; every connection through netguard), its config
// and layers streamed into the blob store with their digests checked, and
// the chart stored through the application layer with the upstream's own
// manifest, so its digest (and the signatures that refer to it) stay the
// upstream's. A cached tag is revalidated once the repository's ttl has
// passed with one HEAD request for that tag, never by listing the
// upstream: when its digest changed, the version is dropped and fetched
// again; when the upstream fails, the cached version is served stale.
//
// An OCI upstream has no index: the proxy repository's index.yaml (and
// /v1, search, the chart pages) list the versions fetched so far, and a
// Helm request for an archive fills it over OCI by its version's tag
// (decision 15: registries need not list their repositories).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ociclient"
)

// Helm's OCI media types (as internal/registry names them).
const (
	mediaTypeHelmConfig      = "application/vnd.cncf.helm.config.v1+json"
	mediaTypeHelmChart       = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	mediaTypeHelmLegacyChart = "application/tar+gzip"
	mediaTypeHelmProvenance  = "application/vnd.cncf.helm.chart.provenance.v1.prov"
)

// ociState is what the cache keeps of OCI upstreams: a client per
// upstream (its tokens cached), and when each cached tag was last
// checked with the upstream.
type ociState struct {
	mu      sync.Mutex
	clients map[string]*ociclient.Client
	checked map[string]time.Time
	// failed holds, by cached tag, until when a failed revalidation is
	// remembered (the negative cache).
	failed map[string]time.Time
}

// ociManifestDoc is what a fill reads of an upstream manifest.
type ociManifestDoc struct {
	MediaType    string               `json:"mediaType,omitempty"`
	ArtifactType string               `json:"artifactType,omitempty"`
	Config       *ocispec.Descriptor  `json:"config,omitempty"`
	Layers       []ocispec.Descriptor `json:"layers,omitempty"`
	Subject      *ocispec.Descriptor  `json:"subject,omitempty"`
	Annotations  map[string]string    `json:"annotations,omitempty"`
}

// ociClient returns the client of r's upstream: anonymous or with r's
// credential, over plain http only for a host the operator listed in
// --plain-http-upstreams, connecting through netguard with the server's
// private-address allowance.
func (c *Cache) ociClient(r *chartctl.Repository, st *repoState) (*ociclient.Client, error) {
	c.oci.mu.Lock()
	defer c.oci.mu.Unlock()
	if cl := c.oci.clients[st.key]; cl != nil {
		return cl, nil
	}
	host, _, _ := app.OCIUpstream(r)
	pw := ""
	if r.Proxy.Password != nil {
		if c.secrets == nil {
			return nil, c.upstreamError(r, errors.New("this server has no secrets key to open the upstream's password with"))
		}
		b, err := c.secrets.Open(r.Proxy.Password)
		if err != nil {
			return nil, c.upstreamError(r, errors.New("the upstream's password cannot be read with this server's secrets key"))
		}
		pw = string(b)
	}
	cl, err := ociclient.New(ociclient.Options{
		Host:      host,
		PlainHTTP: c.app.PlainHTTPUpstream(host, "443"),
		Username:  r.Proxy.Username,
		Password:  pw,
		Transport: netguard.UpstreamAllowing(c.opts.Timeout, c.opts.Allow, app.FlagAllowPrivateUpstreams),
		Timeout:   c.opts.Timeout,
		UserAgent: "chartctl-proxy",
	})
	if err != nil {
		return nil, c.upstreamError(r, err)
	}
	if c.oci.clients == nil || len(c.oci.clients) > 1000 {
		c.oci.clients = map[string]*ociclient.Client{}
	}
	c.oci.clients[st.key] = cl
	return cl, nil
}

// upstreamRepo is the upstream repository of chart name: PATH/<name>.
func upstreamRepo(r *chartctl.Repository, name string) string {
	_, p, _ := app.OCIUpstream(r)
	if p == "" {
		return name
	}
	return p + "/" + name
}

// ociStore is the store's OCI part, where fills link their blobs.
func (c *Cache) ociStore() (chartctl.OCIStore, error) {
	s, ok := c.app.Store.(chartctl.OCIStore)
	if !ok {
		return nil, errors.New("proxy: the store keeps no OCI manifests")
	}
	return s, nil
}

// EnsureManifest makes sure the manifest ref (a tag or a digest) of chart
// name of the proxy repository r, whose upstream is oci://HOST/PATH, is
// stored here (app.OCIProxy).
func (c *Cache) EnsureManifest(ctx context.Context, r *chartctl.Repository, name, ref string) (stale, stored bool, err error) {
	if _, _, ok := app.OCIUpstream(r); !ok {
		return false, false, nil
	}
	if chart.ValidateName(name) != nil || !r.Proxy.Allows(name) {
		return false, false, notInUpstream(r, name, ref)
	}
	oci, err := c.ociStore()
	if err != nil {
		return false, false, err
	}
	st := c.state(r)
	oname := r.Name + "/" + name
	byDigest := strings.Contains(ref, ":")
	if byDigest {
		// A digest names fixed content: stored is final.
		if _, err := oci.Manifest(ctx, oname, ref); err == nil {
			c.countHit(st)
			return false, false, nil
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return false, false, err
		}
	} else {
		version := chartctl.TagVersion(ref)
		if chart.ValidateVersion(version) != nil {
			// Only chart versions are fetched; other tags are those
			// copied with them (cosign's sha256-<hex>.sig), served as
			// stored.
			if _, err := oci.Tag(ctx, oname, ref); err == nil {
				return false, false, nil
			}
			return false, false, notInUpstream(r, name, ref)
		}
		if _, err := c.app.ChartVersion(ctx, r, name, version); err == nil {
			stale, refetch, err := c.revalidate(ctx, r, st, oci, name, ref)
			if err != nil || !refetch {
				return stale, false, err
			}
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return false, false, err
		}
	}
	st.misses.Add(1)
	c.miss.Inc()
	if err := c.ociFillOnce(ctx, r, st, name, ref); err != nil {
		return false, false, err
	}
	return false, true, nil
}

// countHit counts a request served from what is cached.
func (c *Cache) countHit(st *repoState) {
	st.hits.Add(1)
	c.hit.Inc()
}

// checkedKey names one cached tag of one upstream.
func checkedKey(st *repoState, name, tag string) string {
	return st.key + "\x00" + name + "\x00" + tag
}

// revalidate checks the cached tag ref of chart name with the upstream
// once r's ttl has passed since it was last checked: one HEAD request.
// refetch reports that the upstream's digest changed, and the version
// was dropped to be fetched again; stale that the upstream failed and
// the cached version stays.
func (c *Cache) revalidate(ctx context.Context, r *chartctl.Repository, st *repoState, oci chartctl.OCIStore, name, ref string) (stale, refetch bool, err error) {
	key := checkedKey(st, name, ref)
	now := c.opts.Now()
	c.oci.mu.Lock()
	checked, ok := c.oci.checked[key]
	failedUntil := c.oci.failed[key]
	c.oci.mu.Unlock()
	if ok && now.Before(checked.Add(r.Proxy.TTL)) {
		c.countHit(st)
		return false, false, nil
	}
	if now.Before(failedUntil) {
		// The upstream failed moments ago: stale without asking again.
		st.hits.Add(1)
		c.stale.Inc()
		return true, false, nil
	}
	type result struct{ stale, refetch bool }
	v, err, _ := c.flight.Do("ocihead\x00"+key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.Timeout)
		defer cancel()
		oname := r.Name + "/" + name
		local, err := oci.Tag(fctx, oname, ref)
		if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return nil, err
		}
		cl, err := c.ociClient(r, st)
		if err != nil {
			return result{stale: true}, nil
		}
		d, herr := cl.HeadManifest(fctx, upstreamRepo(r, name), ref)
		c.ociHealth(r, st, herr)
		switch {
		case herr != nil && !ociclient.IsNotFound(herr):
			c.opts.Logger.Warn("proxy upstream failed; serving the cached version", "repository", r.Name, "chart", name, "tag", ref, "upstream", r.Proxy.URL, "err", herr)
			// The negative cache: asked again after NegativeTTL, not on
			// every pull while the upstream is down.
			c.oci.mu.Lock()
			if c.oci.failed == nil || len(c.oci.failed) > 100000 {
				c.oci.failed = map[string]time.Time{}
			}
			c.oci.failed[key] = c.opts.Now().Add(c.opts.NegativeTTL)
			c.oci.mu.Unlock()
			return result{stale: true}, nil
		case herr != nil:
			// The upstream deleted the tag: what was fetched stays
			// (deleting it is a purge's job, not a pull's).
		case d.Digest.String() != local:
			c.opts.Logger.Info("proxy upstream tag changed; fetching it again", "repository", r.Name, "chart", name, "tag", ref, "was", local, "now", d.Digest)
			if err := c.app.DropProxied(fctx, r, name, chartctl.TagVersion(ref)); err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				return nil, err
			}
			return result{refetch: true}, nil
		}
		c.oci.mu.Lock()
		if c.oci.checked == nil || len(c.oci.checked) > 100000 {
			c.oci.checked = map[string]time.Time{}
		}
		c.oci.checked[key] = c.opts.Now()
		delete(c.oci.failed, key)
		c.oci.mu.Unlock()
		return result{}, nil
	})
	if err != nil {
		return false, false, err
	}
	res := v.(result)
	switch {
	case res.stale:
		st.hits.Add(1)
		c.stale.Inc()
	case !res.refetch:
		c.countHit(st)
	}
	return res.stale, res.refetch, nil
}

// ociHealth records how the upstream answered (a missing manifest is an
// answer).
func (c *Cache) ociHealth(r *chartctl.Repository, st *repoState, err error) {
	if err != nil && !ociclient.IsNotFound(err) {
		err = c.ociError(r, err)
	} else {
		err = nil
	}
	c.health(r, st, err)
}

// ociFillOnce fills ref of chart name once: one fetch for concurrent
// callers in this process, and a lease across replicas; a failure is
// remembered for NegativeTTL.
func (c *Cache) ociFillOnce(ctx context.Context, r *chartctl.Repository, st *repoState, name, ref string) error {
	return c.once(ctx, st, "oci\x00"+vkey(name, ref), func(fctx context.Context) error {
		return c.ociLeased(fctx, r, st, name, ref)
	})
}

// ociLeased fetches ref under a lease, so one replica fetches it.
func (c *Cache) ociLeased(ctx context.Context, r *chartctl.Repository, st *repoState, name, ref string) error {
	oci, err := c.ociStore()
	if err != nil {
		return err
	}
	oname := r.Name + "/" + name
	present := func() bool {
		if strings.Contains(ref, ":") {
			_, err := oci.Manifest(ctx, oname, ref)
			return err == nil
		}
		_, err := c.app.Store.ChartVersion(ctx, r.Name, name, chartctl.TagVersion(ref))
		return err == nil
	}
	return c.leased(ctx, r, "proxy:"+r.ID+":oci:"+name+":"+ref, present, func() error {
		err := c.ociFill(ctx, r, st, oci, name, ref)
		c.ociHealth(r, st, err)
		return c.ociFillError(r, name, ref, err)
	})
}

// ociFillError words a failed fill of chart name ref of r for a person.
func (c *Cache) ociFillError(r *chartctl.Repository, name, ref string, err error) error {
	if chartctl.ErrorCode(err) == chartctl.EUPSTREAM || chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		// Already worded for a person.
		return err
	}
	if err != nil && ociclient.IsNotFound(err) {
		return notInUpstream(r, name, ref)
	}
	if err != nil && chartctl.ErrorCode(err) == "" {
		return c.ociError(r, err)
	}
	return err
}

// notInUpstream is the ENOTFOUND of a chart manifest the upstream does
// not have (or r's filters exclude).
func notInUpstream(r *chartctl.Repository, name, ref string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q %s is not in proxy repository %q's upstream (%s/%s).", name, ref, r.Name, r.Proxy.URL, name)
}

// ociError is the EUPSTREAM error of a failure to use r's OCI upstream.
func (c *Cache) ociError(r *chartctl.Repository, err error) error {
	switch {
	case errors.Is(err, ociclient.ErrUnauthorized):
		err = errors.New("it refused the proxy's credential (or wants one): set proxy.username and proxy.password")
	case errors.Is(err, ociclient.ErrDigestMismatch):
		err = errors.New("what it sent does not match its digest")
	case errors.Is(err, ociclient.ErrTooLarge):
		err = errors.New("its manifest is larger than this server reads")
	}
	return c.upstreamError(r, err)
}

// ociFill fetches the manifest ref of chart name from r's upstream, its
// blobs into the blob store (linked at the proxy's name), and stores the
// chart through the application layer with that manifest.
func (c *Cache) ociFill(ctx context.Context, r *chartctl.Repository, st *repoState, oci chartctl.OCIStore, name, ref string) error {
	cl, err := c.ociClient(r, st)
	if err != nil {
		return err
	}
	up := upstreamRepo(r, name)
	desc, body, err := cl.Manifest(ctx, up, ref)
	if err != nil {
		if ociclient.IsNotFound(err) {
			return notInUpstream(r, name, ref)
		}
		return c.ociError(r, err)
	}
	var doc ociManifestDoc
	if err := json.Unmarshal(body, &doc); err != nil || doc.Config == nil {
		return chartctl.Errorf(chartctl.ENOTFOUND, "%s/%s:%s at proxy repository %q's upstream is not a Helm chart (proxy repositories serve charts only).", r.Proxy.URL, name, ref, r.Name)
	}
	if doc.Config.MediaType != mediaTypeHelmConfig {
		return chartctl.Errorf(chartctl.ENOTFOUND, "%s/%s:%s at proxy repository %q's upstream is a %s, not a Helm chart (proxy repositories serve charts only).", r.Proxy.URL, name, ref, r.Name, doc.Config.MediaType)
	}
	var chartLayer, provLayer *ocispec.Descriptor
	for i, l := range doc.Layers {
		switch l.MediaType {
		case mediaTypeHelmChart, mediaTypeHelmLegacyChart:
			if chartLayer != nil {
				return c.upstreamError(r, fmt.Errorf("its manifest of %s:%s has two chart layers", name, ref))
			}
			chartLayer = &doc.Layers[i]
		case mediaTypeHelmProvenance:
			if provLayer != nil {
				return c.upstreamError(r, fmt.Errorf("its manifest of %s:%s has two provenance layers", name, ref))
			}
			provLayer = &doc.Layers[i]
		default:
			return c.upstreamError(r, fmt.Errorf("its manifest of %s:%s has a layer of type %q, which is not a chart's", name, ref, l.MediaType))
		}
	}
	if chartLayer == nil {
		return c.upstreamError(r, fmt.Errorf("its manifest of %s:%s has no chart layer", name, ref))
	}
	if chartLayer.Size > c.app.Config.MaxChartSize {
		return chartctl.Errorf(chartctl.ETOOLARGE, "The chart archive of %s:%s at the upstream is larger than this server's maximum chart size.", name, ref)
	}
	blobs := append([]ocispec.Descriptor{*doc.Config}, doc.Layers...)
	digests := make([]string, len(blobs))
	for i, b := range blobs {
		if b.Digest.Algorithm() != digest.SHA256 {
			return c.upstreamError(r, fmt.Errorf("its manifest of %s:%s names a %s blob; this proxy stores sha256 blobs only", name, ref, b.Digest.Algorithm()))
		}
		if b.Size > c.app.Config.MaxChartSize {
			return chartctl.Errorf(chartctl.ETOOLARGE, "A blob of %s:%s at the upstream is larger than this server's maximum chart size.", name, ref)
		}
		digests[i] = b.Digest.String()
	}
	// Claimed until stored: no orphan sweep removes the blobs between.
	release, err := c.app.ClaimDigests(ctx, digests...)
	if err != nil {
		return err
	}
	defer release()
	oname := r.Name + "/" + name
	for _, b := range blobs {
		if err := c.copyBlob(ctx, r, cl, oci, up, oname, b); err != nil {
			return err
		}
	}
	archive, err := c.app.Blobs.Open(ctx, chartLayer.Digest.String())
	if err != nil {
		return err
	}
	defer archive.Close()
	u, err := c.app.ReceiveStoredArchive(ctx, chartLayer.Digest.String(), archive)
	if err != nil {
		return err
	}
	tag := chartctl.VersionTag(u.Chart.Version)
	if u.Chart.Name != name || (!strings.Contains(ref, ":") && ref != tag) {
		return c.app.Reject(u, c.upstreamError(r, fmt.Errorf("its %s:%s holds the chart %s %s", name, ref, u.Chart.Name, u.Chart.Version)))
	}
	if provLayer != nil {
		pb, err := c.app.Blobs.Open(ctx, provLayer.Digest.String())
		if err != nil {
			return c.app.Reject(u, err)
		}
		err = c.app.ReceiveProv(ctx, u, pb)
		pb.Close()
		if err != nil {
			return c.app.Reject(u, err)
		}
	}
	mt := desc.MediaType
	if mt == "" {
		mt = doc.MediaType
	}
	if mt == "" {
		mt = ocispec.MediaTypeImageManifest
	}
	man := &chartctl.OCIManifest{Name: oname, Digest: desc.Digest.String(), MediaType: mt, ArtifactType: doc.ArtifactType,
		Annotations: doc.Annotations, Blobs: digests, Content: body}
	if man.ArtifactType == "" {
		man.ArtifactType = doc.Config.MediaType
	}
	if doc.Subject != nil {
		man.Subject = doc.Subject.Digest.String()
	}
	var created time.Time
	if v := doc.Annotations[ocispec.AnnotationCreated]; v != "" {
		created, _ = time.Parse(time.RFC3339, v)
	}
	actx := chartctl.WithActor(ctx, &chartctl.Actor{CredentialKind: chartctl.CredentialProxy})
	if _, _, err := c.app.PutProxiedManifest(actx, r, u, created, man, tag); err != nil {
		return err
	}
	c.oci.mu.Lock()
	if c.oci.checked == nil || len(c.oci.checked) > 100000 {
		c.oci.checked = map[string]time.Time{}
	}
	c.oci.checked[checkedKey(st, name, tag)] = c.opts.Now()
	c.oci.mu.Unlock()
	c.opts.Logger.Info("proxy filled", "repository", r.Name, "chart", name, "version", u.Chart.Version, "upstream", r.Proxy.URL, "digest", man.Digest)
	c.copyReferrers(ctx, r, cl, oci, up, oname, desc, name, u.Chart.Version)
	return nil
}

// copyReferrers copies the manifests that refer to subject at the
// upstream (cosign and Notation signatures, SBOMs: ociclient.Referrers
// finds them through the referrers API, its tag-schema fallback and
// cosign's .sig tags) to oname, and verifies the version again with
// them. A referrer that cannot be copied is logged and left: the chart
// is stored and served either way.
func (c *Cache) copyReferrers(ctx context.Context, r *chartctl.Repository, cl *ociclient.Client, oci chartctl.OCIStore, up, oname string, subject ocispec.Descriptor, name, version string) {
	refs, err := cl.Referrers(ctx, up, subject)
	if err != nil {
		c.opts.Logger.Warn("proxy: list the upstream's referrers", "repository", r.Name, "chart", name, "version", version, "err", err)
		return
	}
	copied := 0
	for _, ref := range refs {
		if err := c.copyReferrer(ctx, cl, oci, up, oname, ref); err != nil {
			c.opts.Logger.Warn("proxy: copy a referrer", "repository", r.Name, "chart", name, "version", version, "referrer", ref.Digest, "err", err)
			continue
		}
		copied++
	}
	if copied == 0 {
		return
	}
	if _, err := c.app.VerifyVersion(context.WithoutCancel(ctx), r.Name, name, version); err != nil {
		c.opts.Logger.Warn("proxy: verify a filled version", "repository", r.Name, "chart", name, "version", version, "err", err)
	}
}

// copyReferrer copies one referrer manifest and its blobs to oname,
// under its cosign tag when it was found by one.
func (c *Cache) copyReferrer(ctx context.Context, cl *ociclient.Client, oci chartctl.OCIStore, up, oname string, ref ociclient.Referrer) error {
	desc, body, err := cl.Manifest(ctx, up, ref.Digest.String())
	if err != nil {
		return err
	}
	var doc ociManifestDoc
	if err := json.Unmarshal(body, &doc); err != nil || doc.Config == nil {
		return errors.New("not an image manifest")
	}
	blobs := append([]ocispec.Descriptor{*doc.Config}, doc.Layers...)
	digests := make([]string, len(blobs))
	for i, b := range blobs {
		if b.Digest.Algorithm() != digest.SHA256 || b.Size > c.app.Config.MaxChartSize {
			return fmt.Errorf("blob %s is not a sha256 blob of at most the maximum chart size", b.Digest)
		}
		digests[i] = b.Digest.String()
	}
	release, err := c.app.ClaimDigests(ctx, digests...)
	if err != nil {
		return err
	}
	defer release()
	for _, b := range blobs {
		if err := c.copyBlob(ctx, nil, cl, oci, up, oname, b); err != nil {
			return err
		}
	}
	mt := desc.MediaType
	if mt == "" {
		mt = doc.MediaType
	}
	if mt == "" {
		mt = ocispec.MediaTypeImageManifest
	}
	man := &chartctl.OCIManifest{Name: oname, Digest: desc.Digest.String(), MediaType: mt, ArtifactType: doc.ArtifactType,
		Annotations: doc.Annotations, Blobs: digests, Content: body}
	if man.ArtifactType == "" {
		man.ArtifactType = doc.Config.MediaType
	}
	if doc.Subject != nil {
		man.Subject = doc.Subject.Digest.String()
	}
	return oci.PutManifest(ctx, man, ref.Tag)
}

// copyBlob streams the blob b of the upstream repository up into the
// blob store, checking its digest, and links it at oname. Errors are
// worded as r's upstream failing (as they come, for a nil r).
func (c *Cache) copyBlob(ctx context.Context, r *chartctl.Repository, cl *ociclient.Client, oci chartctl.OCIStore, up, oname string, b ocispec.Descriptor) error {
	d := b.Digest.String()
	if _, err := c.app.Blobs.ModTime(ctx, d); err == nil {
		// Stored already (another proxy's fill, a push): the store's
		// copy was checked when it was written.
		return oci.LinkBlob(ctx, oname, d, b.Size)
	}
	rc, err := cl.Blob(ctx, up, b)
	if err != nil {
		if r == nil {
			return err
		}
		return c.ociError(r, err)
	}
	defer rc.Close()
	w, err := c.app.Blobs.Create(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = w.Abort() }()
	src := &readErr{r: rc}
	if _, err := io.Copy(w, src); err != nil {
		if src.err != nil && r != nil {
			return c.ociError(r, src.err)
		}
		return err
	}
	if w.Digest() != d {
		if r == nil {
			return ociclient.ErrDigestMismatch
		}
		return c.ociError(r, ociclient.ErrDigestMismatch)
	}
	if _, err := w.Commit(); err != nil {
		return err
	}
	return oci.LinkBlob(ctx, oname, d, w.Size())
}

// ociIndex is the index of a proxy of an OCI upstream: the versions
// fetched so far (an OCI upstream has no index to list the others).
func (c *Cache) ociIndex(ctx context.Context, r *chartctl.Repository, q helmindex.Query) (*helmindex.Index, bool, error) {
	idx, err := c.index.View(ctx, r.Name, q)
	return idx, false, err
}

// ociFetch is Fetch for a proxy of an OCI upstream: the version is
// filled over OCI by its tag.
func (c *Cache) ociFetch(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
		return nil, app.ChartNotFound(r.Name, name, version)
	}
	if _, _, err := c.EnsureManifest(ctx, r, name, chartctl.VersionTag(version)); err != nil {
		return nil, err
	}
	return c.app.ChartVersion(ctx, r, name, version)
}
