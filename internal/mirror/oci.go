package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ociclient"
)

// This file follows oci://HOST/PATH upstreams (CONTRACT §18 "Federation",
// decision 15) through internal/ociclient: oci://HOST/PATH/CHART is one
// chart repository, every tag of which (tags/list, its Link pages) is a
// version; oci://HOST/PATH is every chart repository below PATH that the
// registry's /v2/_catalog lists. Registries without a catalog (GHCR,
// Docker Hub) take the first form only, and a sync says so.

// The media types `helm push` gives a chart's manifest.
const (
	helmConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	helmChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	helmProvMediaType   = "application/vnd.cncf.helm.chart.provenance.v1.prov"
)

// ociVersions lists the versions an oci:// upstream offers, lazily: a
// version's manifest is fetched only when it is copied, so a sync of a
// mirror that holds every version asks only for tag lists.
func (s *Syncer) ociVersions(ctx context.Context, upstream string, auth importer.Auth) ([]*importer.Version, error) {
	rest, _ := strings.CutPrefix(upstream, "oci://")
	host, path, _ := strings.Cut(rest, "/")
	c, err := ociclient.New(ociclient.Options{Host: host, PlainHTTP: s.plainHTTP(host), Username: auth.Username, Password: auth.Password,
		Transport: netguard.UpstreamAllowing(s.opts.Timeout, s.opts.Allow, app.FlagAllowPrivateUpstreams), PrivateFlag: app.FlagAllowPrivateUpstreams, Timeout: s.opts.Timeout, PageSize: s.opts.OCIPageSize})
	if err != nil {
		return nil, err
	}
	repos := map[string][]string{}
	tags, err := c.Tags(ctx, path)
	switch {
	case err == nil && len(tags) > 0:
		// oci://HOST/PATH/CHART: one chart repository.
		repos[path] = tags
	case err != nil && !ociclient.IsNotFound(err):
		return nil, ociError(upstream, err)
	default:
		// oci://HOST/PATH: the chart repositories the catalog lists
		// below PATH.
		names, err := c.Catalog(ctx)
		if errors.Is(err, ociclient.ErrNoCatalog) {
			return nil, fmt.Errorf("%s is not a chart repository with tags, and %s has no /v2/_catalog to list the chart repositories under %s: mirror each chart as oci://%s/%s/CHART",
				upstream, host, path, host, path)
		}
		if err != nil {
			return nil, ociError(upstream, err)
		}
		for _, name := range names {
			if !strings.HasPrefix(name, path+"/") {
				continue
			}
			tags, err := c.Tags(ctx, name)
			if err != nil {
				return nil, ociError("oci://"+host+"/"+name, err)
			}
			repos[name] = tags
		}
		if len(repos) == 0 {
			return nil, fmt.Errorf("%s holds no chart repositories: the registry's catalog lists none under %s", upstream, path)
		}
	}
	var out []*importer.Version
	for repo, tags := range repos {
		name := repo[strings.LastIndex(repo, "/")+1:]
		for _, tag := range tags {
			// Helm tags a version with its "+" as "_" (OCI tags cannot
			// hold "+"); tags that are no SemVer version (latest,
			// cosign's sha256-….sig, referrer tags) are not charts.
			version := strings.ReplaceAll(tag, "_", "+")
			if _, err := semver.StrictNewVersion(version); err != nil {
				continue
			}
			out = append(out, s.ociVersion(c, repo, name, version, tag))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return semver.MustParse(out[i].Version).LessThan(semver.MustParse(out[j].Version))
	})
	return out, nil
}

// ociVersion is one tag of repo as a version whose archive and provenance
// file are layers of the tag's manifest, read on first use. The blobs are
// checked against their digests as they stream (ociclient); the
// manifest's creation annotation, when it has one, becomes the version's
// created time.
func (s *Syncer) ociVersion(c *ociclient.Client, repo, name, version, tag string) *importer.Version {
	var (
		once  sync.Once
		layer map[string]ociclient.Descriptor
		mErr  error
		v     *importer.Version
	)
	manifest := func(ctx context.Context) error {
		once.Do(func() {
			_, b, err := c.Manifest(ctx, repo, tag)
			if err != nil {
				mErr = err
				return
			}
			var m ocispec.Manifest
			if err := json.Unmarshal(b, &m); err != nil || m.Config.MediaType != helmConfigMediaType {
				mErr = errors.New("not a Helm chart (the manifest's config is not " + helmConfigMediaType + ")")
				return
			}
			layer = map[string]ociclient.Descriptor{}
			for _, l := range m.Layers {
				if l.MediaType == helmChartMediaType || l.MediaType == helmProvMediaType {
					layer[l.MediaType] = l
				}
			}
			if _, ok := layer[helmChartMediaType]; !ok {
				mErr = errors.New("the manifest has no chart layer (" + helmChartMediaType + ")")
				return
			}
			if t, err := time.Parse(time.RFC3339Nano, m.Annotations[ocispec.AnnotationCreated]); err == nil {
				v.Created = t
			}
		})
		return mErr
	}
	open := func(mediaType string) func(ctx context.Context) (io.ReadCloser, error) {
		return func(ctx context.Context) (io.ReadCloser, error) {
			if err := manifest(ctx); err != nil {
				return nil, err
			}
			d, ok := layer[mediaType]
			if !ok {
				return nil, importer.ErrNotFound
			}
			return c.Blob(ctx, repo, d)
		}
	}
	v = importer.NewVersion(name, version, c.Host()+"/"+repo+":"+tag, open(helmChartMediaType), open(helmProvMediaType))
	return v
}

// plainHTTP reports whether the operator lets upstream host be reached
// over plain http (--plain-http-upstreams).
func (s *Syncer) plainHTTP(host string) bool {
	for _, h := range s.app.Config.PlainHTTPUpstreams {
		if strings.EqualFold(strings.TrimSpace(h), host) {
			return true
		}
	}
	return false
}

// ociError says what failed with an oci:// upstream, and what to do about
// a refused credential.
func ociError(upstream string, err error) error {
	if errors.Is(err, ociclient.ErrUnauthorized) {
		return fmt.Errorf("%s: %w; check the mirror's username and password", upstream, err)
	}
	return fmt.Errorf("%s: %w", upstream, err)
}
