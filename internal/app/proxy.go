package app

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/netguard"
)

// This file holds the rules of proxy repositories (CONTRACT §18
// "Federation"): what a proxy's settings may be, that nothing but its
// fills writes charts into it, and the purge of its cache. The fetching
// and caching run in internal/proxy, which the transports ask through
// App.Proxies.

// FlagPlainHTTPUpstreams is the server flag listing the upstream
// HOST:PORTs a proxy may reach over plain http.
const FlagPlainHTTPUpstreams = "--plain-http-upstreams"

// maxProxyTTL bounds a proxy's ttl (a week): past that an upstream's
// changes would go unseen too long to call it a cache.
const maxProxyTTL = 7 * 24 * time.Hour

// ProxyInput is what a caller sets on a proxy repository: all of it when
// creating one (URL required, TTL defaulting to chartctl.DefaultProxyTTL),
// the non-nil fields when changing one. An empty Username or Password
// removes it.
type ProxyInput struct {
	URL      *string
	Username *string
	Password *string
	TTL      *string
	// Retention is how long a cached version nobody uses is kept
	// (ParseProxyRetention; default chartctl.DefaultProxyRetention).
	Retention *string
	Include   *[]string
	Exclude   *[]string
}

// ProxyStats is what a proxy repository's cache has done since this
// process started, and how its upstream last answered.
type ProxyStats struct {
	// Hits counts requests served from what was cached; Misses those that
	// needed the upstream.
	Hits, Misses int64
	// UpstreamStatus is "ok", "unreachable" (the last request to it
	// failed or timed out) or "unknown" (not asked since start).
	UpstreamStatus string
	// UpstreamError says why the last request failed ("" when ok).
	UpstreamError string
	// CheckedAt is when the upstream last answered or failed (nil if
	// never).
	CheckedAt *time.Time
}

// ProxyCache is the proxy repositories' cache (internal/proxy), as the
// application layer and /v1 see it.
type ProxyCache interface {
	// Stats returns the repository's cache counters and upstream health.
	Stats(r *chartctl.Repository) ProxyStats
	// Forget drops what is remembered of the repository's upstream (its
	// index, negative entries), so the next request asks again.
	Forget(r *chartctl.Repository)
	// Index returns the view q of the proxy repository r's Helm index;
	// stale reports that the upstream failed and it is what was cached.
	// With nothing cached the error is EUPSTREAM.
	Index(ctx context.Context, r *chartctl.Repository, q helmindex.Query) (idx *helmindex.Index, stale bool, err error)
	// Fetch returns chart version name version of the proxy repository
	// r, fetching and storing it from the upstream on a miss: ENOTFOUND
	// when the upstream does not list it, EUPSTREAM when the upstream
	// failed.
	Fetch(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error)
}

// NewProxy validates in and returns the proxy settings a new repository
// is created with, its password sealed. Errors are EINVALID naming
// "proxy.url", "proxy.ttl", "proxy.username", "proxy.password",
// "proxy.include" or "proxy.exclude".
func (a *App) NewProxy(in ProxyInput) (*chartctl.Proxy, error) {
	if in.URL == nil {
		return nil, chartctl.Invalid("proxy.url", "proxy.url is required: the URL of the upstream Helm repository (where its index.yaml is) or oci://HOST/PATH of a registry.")
	}
	return a.proxySettings(&chartctl.Proxy{TTL: chartctl.DefaultProxyTTL, Retention: chartctl.DefaultProxyRetention}, in)
}

// proxySettings applies in to a copy of cur and validates the result.
func (a *App) proxySettings(cur *chartctl.Proxy, in ProxyInput) (*chartctl.Proxy, error) {
	out := cur.Clone()
	if in.URL != nil {
		u, err := a.validateProxyURL(*in.URL)
		if err != nil {
			return nil, err
		}
		out.URL = u
	}
	if in.TTL != nil {
		d, err := ParseProxyTTL(*in.TTL)
		if err != nil {
			return nil, err
		}
		out.TTL = d
	}
	if in.Retention != nil {
		d, err := ParseProxyRetention(*in.Retention)
		if err != nil {
			return nil, err
		}
		out.Retention = d
	}
	if in.Username != nil {
		u := *in.Username
		if len(u) > 256 || strings.ContainsAny(u, ":\r\n") {
			return nil, chartctl.Invalid("proxy.username", "proxy.username must be at most 256 characters, without ':' or line breaks.")
		}
		out.Username = u
	}
	if in.Password != nil {
		p := *in.Password
		if len(p) > 1024 || strings.ContainsAny(p, "\r\n") {
			return nil, chartctl.Invalid("proxy.password", "proxy.password must be at most 1024 characters, without line breaks.")
		}
		out.Password = nil
		if p != "" {
			if a.Secrets == nil {
				return nil, chartctl.Errorf(chartctl.EUNAVAILABLE, "Proxy passwords cannot be stored: the server has no secrets key.")
			}
			sealed, err := a.Secrets.Seal([]byte(p))
			if err != nil {
				return nil, err
			}
			out.Password = sealed
		}
	}
	for _, f := range []struct {
		param string
		in    *[]string
		out   *[]string
	}{{"proxy.include", in.Include, &out.Include}, {"proxy.exclude", in.Exclude, &out.Exclude}} {
		if f.in == nil {
			continue
		}
		globs, err := proxyGlobs(f.param, *f.in)
		if err != nil {
			return nil, err
		}
		*f.out = globs
	}
	return out, nil
}

// proxyGlobs checks include or exclude patterns: at most 100 path.Match
// globs of at most 200 characters.
func proxyGlobs(param string, in []string) ([]string, error) {
	if len(in) > 100 {
		return nil, chartctl.Invalid(param, "%s takes at most 100 patterns.", param)
	}
	var out []string
	for _, g := range in {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if _, err := path.Match(g, ""); err != nil || len(g) > 200 || strings.Contains(g, "/") {
			return nil, chartctl.Invalid(param, "%s pattern %q is not a glob on chart names (such as ingress-* or cert-manager): use *, ? and [a-z], no '/'.", param, truncate(g, 40))
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// ParseProxyTTL reads a proxy's ttl: a Go duration ("30s", "10m") or
// whole days, from chartctl.MinProxyTTL to a week, kept to the second.
// Returns EINVALID naming "proxy.ttl".
func ParseProxyTTL(v string) (time.Duration, error) {
	d, err := ParseRetentionDuration("proxy.ttl", strings.TrimSpace(v))
	if err != nil {
		return 0, chartctl.Invalid("proxy.ttl", "proxy.ttl must be a duration such as 30s, 10m or 1h, not %q.", truncate(v, 40))
	}
	if d < chartctl.MinProxyTTL || d > maxProxyTTL {
		return 0, chartctl.Invalid("proxy.ttl", "proxy.ttl must be at least 1s and at most 7d, not %s.", FormatDuration(d))
	}
	return d.Truncate(time.Second), nil
}

// Bounds of a proxy's retention: under an hour a version pulled now and
// then would be fetched again at every pull; ten years is "keep it".
const (
	minProxyRetention = time.Hour
	maxProxyRetention = 3650 * 24 * time.Hour
)

// ParseProxyRetention reads a proxy's retention: "30d", "12h" (whole
// days or a Go duration), from an hour to 3650 days, kept to the second.
// Returns EINVALID naming "proxy.retention".
func ParseProxyRetention(v string) (time.Duration, error) {
	d, err := ParseRetentionDuration("proxy.retention", strings.TrimSpace(v))
	if err != nil {
		return 0, chartctl.Invalid("proxy.retention", "proxy.retention must be a duration such as 30d or 72h, not %q.", truncate(v, 40))
	}
	if d < minProxyRetention || d > maxProxyRetention {
		return 0, chartctl.Invalid("proxy.retention", "proxy.retention must be at least 1h and at most 3650d, not %s.", FormatDuration(d))
	}
	return d.Truncate(time.Second), nil
}

// validateProxyURL checks a proxy's upstream: https://… (or http://… for
// a HOST:PORT the operator lists in --plain-http-upstreams) of a Helm
// repository, or oci://HOST/PATH; no credentials, query or fragment. A
// literal private address is refused at once unless allowed; names are
// checked when each fetch connects.
func (a *App) validateProxyURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || len(raw) > 2048 || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "oci") {
		return "", chartctl.Invalid("proxy.url", "proxy.url must be an https URL of a Helm repository (where its index.yaml is) or oci://HOST/PATH of a registry, at most 2048 characters.")
	}
	if u.User != nil {
		return "", chartctl.Invalid("proxy.url", "proxy.url must not carry credentials; give them as proxy.username and proxy.password, which are stored encrypted.")
	}
	if u.Fragment != "" || u.RawQuery != "" {
		return "", chartctl.Invalid("proxy.url", "proxy.url must not have a ?query or #fragment.")
	}
	if u.Scheme == "http" && !a.PlainHTTPUpstream(u.Host, "80") {
		return "", chartctl.Invalid("proxy.url", "proxy.url %s is plain http, which this server uses only for the hosts its operator lists in %s (HOST:PORT); use https.", u.Redacted(), FlagPlainHTTPUpstreams)
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && netguard.PrivateAddr(ip) && !a.Config.AllowPrivateUpstreams && !a.Config.PrivateUpstreams.Permits(ip) {
		return "", chartctl.Invalid("proxy.url", "proxy.url points to a private or loopback address (%s), which this server refuses (start it with %s to allow it).", ip, FlagAllowPrivateUpstreams)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/index.yaml"), "/")
	u.RawPath = ""
	if u.Scheme == "oci" {
		return validateOCIProxyURL(u)
	}
	return u.String(), nil
}

// PlainHTTPUpstream reports whether host (HOST or HOST:PORT; defPort when
// it has no port) is listed in Config.PlainHTTPUpstreams.
func (a *App) PlainHTTPUpstream(host, defPort string) bool {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), defPort)
	}
	for _, h := range a.Config.PlainHTTPUpstreams {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// ProxyReadOnlyMessage says that r is a read-only proxy and of what, for
// transports with their own error shape (the OCI registry).
func ProxyReadOnlyMessage(r *chartctl.Repository) string {
	return "Repository " + strconv.Quote(r.Name) + " is a read-only proxy of " + r.Proxy.URL +
		": its charts come from there when first pulled (chartctl repo cache purge " + r.Name + " drops what is cached)."
}

// PutProxied commits u, fetched from the upstream of the proxy repository
// r, as a chart version of r: the one way charts enter a proxy. It is
// PutChart otherwise (the admission policy, audit entry and chart.pushed
// event included, decision 3), with the actor ctx carries
// (internal/proxy's).
func (a *App) PutProxied(ctx context.Context, r *chartctl.Repository, u *Upload, created time.Time) (*chartctl.ChartVersion, bool, error) {
	return a.PutChart(ctx, r, u, PutOptions{CreatedAt: created, mirror: true})
}

// ProxyStats returns the cache counters and upstream health of the proxy
// repository r (zero counters and "unknown" without a cache).
func (a *App) ProxyStats(r *chartctl.Repository) ProxyStats {
	if a.Proxies == nil || r.Proxy == nil {
		return ProxyStats{UpstreamStatus: "unknown"}
	}
	return a.Proxies.Stats(r)
}

// PurgeProxyCache deletes what the proxy repository name has cached, for
// p (repo:write, the maintain role): every version, every version of
// chart, or the one version, each with its audit entry and
// chart.deleted event; the upstream's index is fetched again on the next
// request. Returns the versions deleted; EINVALID when the repository is
// not a proxy or chart/version are malformed, ENOTFOUND for a named
// version not cached.
func (a *App) PurgeProxyCache(ctx context.Context, p *chartctl.Principal, name, chartName, version string) ([]*chartctl.ChartVersion, error) {
	r, err := a.WritableRepo(ctx, p, name, SettingsRole)
	if err != nil {
		return nil, err
	}
	if r.Proxy == nil {
		return nil, chartctl.Invalid("repo", "Repository %q is not a proxy: only a proxy repository has a cache to purge (delete versions with chartctl chart delete).", r.Name)
	}
	if version != "" && chartName == "" {
		return nil, chartctl.Invalid("version", "version needs chart: name the chart whose version to purge.")
	}
	if chartName != "" && chart.ValidateName(chartName) != nil {
		return nil, chartctl.Invalid("chart", "%q is not a chart name.", truncate(chartName, 60))
	}
	if version != "" && chart.ValidateVersion(version) != nil {
		return nil, chartctl.Invalid("version", "%q is not a chart version (SemVer).", truncate(version, 60))
	}
	var targets []*chartctl.ChartVersion
	if version != "" {
		cv, err := a.Store.ChartVersion(ctx, r.Name, chartName, version)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Proxy repository %q has no cached version %s %s.", r.Name, chartName, version)
		} else if err != nil {
			return nil, err
		}
		targets = append(targets, cv)
	} else {
		all, err := a.Store.IndexEntries(ctx, r.Name)
		if err != nil {
			return nil, err
		}
		for _, cv := range all {
			if chartName == "" || cv.Name == chartName {
				targets = append(targets, cv)
			}
		}
	}
	out := []*chartctl.ChartVersion{}
	for _, cv := range targets {
		old, err := a.deleteChart(ctx, r, cv.Name, cv.Version)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue // purged meanwhile
		} else if err != nil {
			return out, err
		}
		out = append(out, old)
	}
	if a.Proxies != nil {
		a.Proxies.Forget(r)
	}
	// The purge itself is audited too (each deletion above has its own
	// chart.delete entry): a purge of an empty cache changes no record.
	a.AuditSuccess(ctx, "repository.cache_purge", r.Name, r.Organization)
	return out, nil
}

// proxyData is a proxy as /v1 shows it, for event data.
func proxyData(p *chartctl.Proxy) map[string]any {
	d := map[string]any{"url": p.URL, "ttl": FormatDuration(p.TTL), "retention": FormatDuration(p.EffectiveRetention()), "include": nonNil(p.Include), "exclude": nonNil(p.Exclude)}
	if p.Username != "" {
		d["username"] = p.Username
	}
	return d
}
