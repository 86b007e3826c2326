package app

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds what the application layer knows of proxy repositories
// of an OCI upstream (oci://HOST/PATH, CONTRACT §18 "Federation"): the
// upstream's address rules, and the write paths internal/proxy fills and
// refreshes such a proxy through.

// OCIProxy is the part of the proxy cache (internal/proxy) that serves
// proxy repositories of an OCI upstream to the OCI registry. The registry
// asks it before reading a manifest of such a repository.
type OCIProxy interface {
	// EnsureManifest makes sure the manifest ref (a tag or a digest) of
	// chart name in the proxy repository r is stored here: fetched from
	// the upstream on a miss, a cached tag revalidated with one HEAD
	// request once r's ttl has passed (and fetched again when the
	// upstream's digest changed). stale reports that the upstream failed
	// and what is stored was kept; stored that something was stored.
	// ENOTFOUND when the upstream has no such manifest (or r's filters
	// exclude the chart), EUPSTREAM when it failed and nothing is cached.
	EnsureManifest(ctx context.Context, r *chartctl.Repository, name, ref string) (stale, stored bool, err error)
}

// OCIUpstream splits the URL of a proxy of an OCI upstream into its host
// and path; ok is false for a Helm upstream (or no proxy).
func OCIUpstream(r *chartctl.Repository) (host, path string, ok bool) {
	if r == nil || r.Proxy == nil || !strings.HasPrefix(r.Proxy.URL, "oci://") {
		return "", "", false
	}
	u, err := url.Parse(r.Proxy.URL)
	if err != nil {
		return "", "", false
	}
	return u.Host, strings.Trim(u.Path, "/"), true
}

// validateOCIProxyURL checks an oci://HOST/PATH upstream: PATH (the
// namespace its chart repositories are under) is a lowercase OCI name.
// Whether HOST is reached over plain http is the operator's choice
// (--plain-http-upstreams), made when fetching.
func validateOCIProxyURL(u *url.URL) (string, error) {
	p := strings.Trim(u.Path, "/")
	if p != "" && !chartctl.ValidOCIName(p) {
		return "", chartctl.Invalid("proxy.url", "proxy.url oci://%s/%s needs a lowercase PATH of letters, digits, '.', '_', '-' and '/' (the namespace the upstream's charts are under, such as oci://ghcr.io/org/charts).", u.Host, truncate(p, 80))
	}
	out := "oci://" + strings.ToLower(u.Host)
	if p != "" {
		out += "/" + p
	}
	return out, nil
}

// PutProxiedManifest commits u, fetched from the OCI upstream of the
// proxy repository r, as a chart version of r with man, the upstream's
// manifest (its blobs linked at man.Name), tagged tag: PutProxied for
// an OCI fill, so the version keeps the upstream's manifest digest (and
// the signatures that refer to it stay valid).
func (a *App) PutProxiedManifest(ctx context.Context, r *chartctl.Repository, u *Upload, created time.Time, man *chartctl.OCIManifest, tag string) (*chartctl.ChartVersion, bool, error) {
	return a.PutChart(ctx, r, u, PutOptions{CreatedAt: created, mirror: true, Manifest: man, Tag: tag})
}

// DropProxied deletes the cached version name version of the proxy
// repository r (with its audit entry and chart.deleted event), because
// its upstream now serves other content under its tag: the proxy fetches
// it again. ENOTFOUND when it is not cached.
func (a *App) DropProxied(ctx context.Context, r *chartctl.Repository, name, version string) error {
	if r.Proxy == nil {
		return chartctl.Invalid("repo", "Repository %q is not a proxy.", r.Name)
	}
	_, err := a.deleteChart(ctx, r, name, version)
	return err
}
