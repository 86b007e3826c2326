// Package proxy serves proxy repositories (CONTRACT §18 "Federation"):
// read-only pull-through caches of an upstream Helm repository. The
// upstream's index.yaml is fetched on the first request and revalidated
// with its ETag / Last-Modified once the repository's ttl has passed; its
// entries are served as this repository's index, their URLs rewritten to
// this server. A chart archive is fetched the first time someone asks for
// it, its digest checked against the upstream's index, and stored through
// the application layer (internal/app) like any upload (the admission
// policy, audit entry and chart.pushed event included), so from then on
// it is served from here by every protocol, upstream or no upstream.
//
// Concurrent misses for the same object make one upstream request: in
// this process by single flight, across replicas sharing a PostgreSQL
// store by a lease (chartctl.LeaseStore) per version. A miss that failed
// is remembered for NegativeTTL. When the upstream is down or slower than
// Timeout, what is cached is served and said to be stale (the transports
// add `Warning: 110 - "Response is Stale"`), with a log line and a count
// in chartctl_proxy_requests_total{result="stale"}; what is not cached is
// 502 upstream_unavailable naming the upstream's host.
//
// Connections go through netguard: loopback, private and link-local
// addresses are refused when connecting (after name resolution, on every
// redirect) unless --allow-private-upstreams allows them, and
// HTTPS_PROXY / NO_PROXY are honoured after that check (decision 5).
package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/neterr"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/text"
)

// FlagUpstreamTimeout is the server flag that sets Options.Timeout.
const FlagUpstreamTimeout = "--upstream-timeout"

// Defaults of Options (CONTRACT §18 decision 16).
const (
	DefaultTimeout     = 10 * time.Second
	DefaultNegativeTTL = 30 * time.Second
)

// Opener decrypts stored upstream passwords (a *secrets.Box).
type Opener interface {
	Open(sealed []byte) ([]byte, error)
}

// Options configure a Cache.
type Options struct {
	// Allow says which private addresses upstreams may be at
	// (--allow-private-upstreams).
	Allow netguard.Allowance
	// Timeout bounds each request to an upstream for an index (connect,
	// answer and body) and the wait for an archive's answer
	// (--upstream-timeout, default DefaultTimeout). Past it the upstream
	// counts as down: cached content is served stale.
	Timeout time.Duration
	// FileTimeout bounds reading one archive (default 10m).
	FileTimeout time.Duration
	// NegativeTTL is how long a failed miss is remembered (default
	// DefaultNegativeTTL): asking again sooner gets the same answer
	// without an upstream request.
	NegativeTTL time.Duration
	// MaxIndexSize is the largest upstream index read (default
	// importer.DefaultMaxIndexSize, --upstream-index-max-size).
	MaxIndexSize int64
	// LeaseTTL is how long a fill's lease lasts (default 2m): another
	// replica waits for the holder that long at most.
	LeaseTTL time.Duration
	// Holder names this process in leases (default: the application
	// layer's Replica).
	Holder string
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Cache is the cache of every proxy repository of one server. Create it
// with New and set it as the application's Proxies.
type Cache struct {
	app     *app.App
	secrets Opener
	opts    Options
	client  *http.Client
	index   *helmindex.Cache
	flight  singleflight.Group
	results *prometheus.CounterVec

	// hit, miss, stale and failed are results' counters, looked up once.
	hit, miss, stale, failed prometheus.Counter

	mu    sync.RWMutex
	repos map[string]*repoState

	// oci is what is kept of OCI upstreams (oci.go).
	oci ociState
}

// repoState is what the cache knows of one proxy repository's upstream.
type repoState struct {
	// key identifies the settings it was fetched with: a repository
	// re-created under its name, or pointed elsewhere, starts over.
	key string
	// settings are the repository's ID and proxy settings key was made
	// of, compared on every request without building key again.
	id       string
	settings *chartctl.Proxy

	hits, misses atomic.Int64

	mu sync.Mutex
	// versions are the upstream index's versions that pass the filters,
	// by name and version; list the same as index records.
	versions map[string]*upstreamVersion
	list     []*chartctl.ChartVersion
	etag     string
	lastMod  string
	// fetched is when the index was last fetched or revalidated (zero:
	// never in this process).
	fetched time.Time
	// failedUntil and failErr are the index's negative cache.
	failedUntil time.Time
	failErr     error
	// negative remembers failed fills until their time.
	negative map[string]negEntry
	// status is the upstream's health: "", ok or unreachable.
	status    string
	statusErr string
	checked   time.Time
}

type upstreamVersion struct {
	url     string
	digest  string
	created time.Time
}

type negEntry struct {
	until time.Time
	err   error
}

// New returns a Cache storing through a, opening upstream passwords with
// secrets (nil: proxies with a password fail, saying why).
func New(a *app.App, secrets Opener, opts Options) *Cache {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.FileTimeout <= 0 {
		opts.FileTimeout = 10 * time.Minute
	}
	if opts.NegativeTTL <= 0 {
		opts.NegativeTTL = DefaultNegativeTTL
	}
	if opts.MaxIndexSize <= 0 {
		opts.MaxIndexSize = importer.DefaultMaxIndexSize
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 2 * time.Minute
	}
	if opts.Holder == "" {
		opts.Holder = a.Replica
	}
	if opts.Holder == "" {
		opts.Holder = "proxy-" + rand.Text()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	tr := netguard.UpstreamAllowing(opts.Timeout, opts.Allow, app.FlagAllowPrivateUpstreams)
	tr.ForceAttemptHTTP2 = true
	c := &Cache{app: a, secrets: secrets, opts: opts, repos: map[string]*repoState{},
		client: &http.Client{Transport: tr, CheckRedirect: checkRedirect},
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chartctl_proxy_requests_total",
			Help: "Requests to proxy repositories by result: hit (served from the cache), miss (fetched from the upstream), stale (served from the cache because the upstream failed), error (the upstream failed and nothing was cached).",
		}, []string{"result"}),
	}
	c.hit, c.miss = c.results.WithLabelValues("hit"), c.results.WithLabelValues("miss")
	c.stale, c.failed = c.results.WithLabelValues("stale"), c.results.WithLabelValues("error")
	c.index = helmindex.New(c.load, helmindex.Options{})
	return c
}

// checkRedirect follows at most 10 redirects, never from https to plain
// http; each new address is checked by the dialer like the first.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("refused a redirect from https to %s", req.URL.Redacted())
	}
	return nil
}

// Collector is the cache's Prometheus metric, for the server's registry.
func (c *Cache) Collector() prometheus.Collector { return c.results }

// state returns r's state, starting over when r's settings changed.
// A cache hit takes this path on every pull: it compares r's settings
// with the state's field by field (no key built, no allocation) under a
// read lock.
func (c *Cache) state(r *chartctl.Repository) *repoState {
	c.mu.RLock()
	st := c.repos[r.Name]
	c.mu.RUnlock()
	if st != nil && st.id == r.ID && sameSettings(st.settings, r.Proxy) {
		return st
	}
	p := r.Proxy
	key := strings.Join([]string{r.ID, p.URL, p.Username, string(p.Password), strings.Join(p.Include, ","), strings.Join(p.Exclude, ",")}, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	st = c.repos[r.Name]
	if st == nil || st.key != key {
		st = &repoState{key: key, id: r.ID, settings: p.Clone(), negative: map[string]negEntry{}}
		c.repos[r.Name] = st
		c.index.Drop(r.Name)
	}
	return st
}

// sameSettings reports whether a and b fetch the same things (the TTL
// and retention change no fetched content).
func sameSettings(a, b *chartctl.Proxy) bool {
	return a.URL == b.URL && a.Username == b.Username && bytes.Equal(a.Password, b.Password) &&
		slices.Equal(a.Include, b.Include) && slices.Equal(a.Exclude, b.Exclude)
}

// Stats returns r's counters and upstream health (app.ProxyCache).
func (c *Cache) Stats(r *chartctl.Repository) app.ProxyStats {
	st := c.state(r)
	out := app.ProxyStats{Hits: st.hits.Load(), Misses: st.misses.Load(), UpstreamStatus: "unknown"}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.status != "" {
		out.UpstreamStatus, out.UpstreamError = st.status, st.statusErr
		t := st.checked
		out.CheckedAt = &t
	}
	return out
}

// Forget drops what the cache remembers of r's upstream (app.ProxyCache):
// the next request fetches its index again.
func (c *Cache) Forget(r *chartctl.Repository) {
	c.mu.Lock()
	delete(c.repos, r.Name)
	c.mu.Unlock()
	c.index.Drop(r.Name)
}

// Index returns the view q of the proxy repository r's index: the
// upstream's versions that pass r's filters, fetched or revalidated when
// r's ttl has passed, with the versions stored here that the upstream no
// longer lists. stale reports that the upstream failed and the index is
// what was cached (the upstream's last index, or the versions stored
// here). With nothing cached the error is EUPSTREAM.
func (c *Cache) Index(ctx context.Context, r *chartctl.Repository, q helmindex.Query) (idx *helmindex.Index, stale bool, err error) {
	if _, _, ok := app.OCIUpstream(r); ok {
		return c.ociIndex(ctx, r, q)
	}
	st := c.state(r)
	stale, err = c.refresh(ctx, r, st)
	if err != nil {
		// Never fetched in this process: the versions stored here are
		// what is cached, served stale if there are any.
		stored, serr := c.app.Store.IndexEntries(ctx, r.Name)
		if serr != nil || len(stored) == 0 {
			c.failed.Inc()
			return nil, false, err
		}
		stale = true
	}
	if stale {
		c.stale.Inc()
		st.hits.Add(1)
	}
	idx, err = c.index.View(ctx, r.Name, q)
	return idx, stale, err
}

// load is the index cache's loader: the upstream's versions, then those
// stored here that it does not list.
func (c *Cache) load(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
	c.mu.Lock()
	st := c.repos[repo]
	c.mu.Unlock()
	var out []*chartctl.ChartVersion
	listed := map[string]bool{}
	if st != nil {
		st.mu.Lock()
		out = append(out, st.list...)
		for k := range st.versions {
			listed[k] = true
		}
		st.mu.Unlock()
	}
	stored, err := c.app.Store.IndexEntries(ctx, repo)
	if err != nil {
		return nil, err
	}
	for _, cv := range stored {
		if !listed[vkey(cv.Name, cv.Version)] {
			out = append(out, cv)
		}
	}
	return out, nil
}

func vkey(name, version string) string { return name + "\x00" + version }

// refresh fetches or revalidates r's upstream index when r's ttl has
// passed. stale reports that it failed with an index fetched before at
// hand; err that it failed with none.
func (c *Cache) refresh(ctx context.Context, r *chartctl.Repository, st *repoState) (stale bool, err error) {
	now := c.opts.Now()
	st.mu.Lock()
	fetched, failedUntil, failErr := st.fetched, st.failedUntil, st.failErr
	st.mu.Unlock()
	if !fetched.IsZero() && now.Before(fetched.Add(r.Proxy.TTL)) {
		return false, nil
	}
	if now.Before(failedUntil) {
		// The negative cache: the upstream failed moments ago.
		return !fetched.IsZero(), ifNone(fetched, failErr)
	}
	_, err, _ = c.flight.Do("index\x00"+st.key, func() (any, error) {
		// Not the caller's context: every caller waiting on this fetch
		// shares it, and one of them leaving must not fail the others.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.Timeout)
		defer cancel()
		err := c.fetchIndex(fctx, r, st)
		c.health(r, st, err)
		return nil, err
	})
	if err == nil {
		return false, nil
	}
	st.mu.Lock()
	fetched = st.fetched
	st.mu.Unlock()
	if !fetched.IsZero() {
		c.opts.Logger.Warn("proxy upstream failed; serving the cached index", "repository", r.Name, "upstream", r.Proxy.URL, "err", err)
		return true, nil
	}
	return false, err
}

// ifNone returns err when nothing was ever fetched, else nil.
func ifNone(fetched time.Time, err error) error {
	if fetched.IsZero() {
		return err
	}
	return nil
}

// health records how the upstream answered, and a failure in the index's
// negative cache.
func (c *Cache) health(r *chartctl.Repository, st *repoState, err error) {
	now := c.opts.Now().UTC()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.checked = now
	if err == nil || chartctl.ErrorCode(err) == chartctl.ENOTFOUND || chartctl.ErrorCode(err) == chartctl.EPOLICY {
		st.status, st.statusErr = "ok", ""
		return
	}
	st.status, st.statusErr = "unreachable", chartctl.ErrorMessage(err)
	if chartctl.ErrorCode(err) == chartctl.EUPSTREAM {
		st.failedUntil, st.failErr = now.Add(c.opts.NegativeTTL), err
	}
}

// base is r's upstream URL with a trailing slash, which relative chart
// URLs resolve against (as Helm resolves them).
func base(r *chartctl.Repository) (*url.URL, error) {
	u, err := url.Parse(r.Proxy.URL)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	return u, nil
}

// request makes a GET of u for r's upstream, with its credential when u
// is on the upstream's own scheme and host.
func (c *Cache) request(ctx context.Context, r *chartctl.Repository, u *url.URL) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	up, err := url.Parse(r.Proxy.URL)
	if err != nil {
		return nil, err
	}
	if u.Scheme == up.Scheme && u.Host == up.Host && (r.Proxy.Username != "" || r.Proxy.Password != nil) {
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
		req.SetBasicAuth(r.Proxy.Username, pw)
	}
	return req, nil
}

// fetchIndex fetches r's upstream index, conditionally when one was
// fetched before, and keeps its versions.
func (c *Cache) fetchIndex(ctx context.Context, r *chartctl.Repository, st *repoState) error {
	b, err := base(r)
	if err != nil {
		return c.upstreamError(r, err)
	}
	req, err := c.request(ctx, r, b.JoinPath("index.yaml"))
	if err != nil {
		return err
	}
	st.mu.Lock()
	if !st.fetched.IsZero() {
		if st.etag != "" {
			req.Header.Set("If-None-Match", st.etag)
		}
		if st.lastMod != "" {
			req.Header.Set("If-Modified-Since", st.lastMod)
		}
	}
	st.mu.Unlock()
	resp, err := c.client.Do(req)
	if err != nil {
		return c.upstreamError(r, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		st.mu.Lock()
		st.fetched = c.opts.Now()
		st.mu.Unlock()
		return nil
	case resp.StatusCode != http.StatusOK:
		return c.upstreamError(r, fmt.Errorf("its index.yaml answered %s", resp.Status))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxIndexSize+1))
	if err != nil {
		return c.upstreamError(r, err)
	}
	if int64(len(body)) > c.opts.MaxIndexSize {
		return c.upstreamError(r, fmt.Errorf("its index.yaml is larger than %s, the limit the server's --upstream-index-max-size sets", text.HumanBytes(c.opts.MaxIndexSize)))
	}
	versions, list, err := parseIndex(r, b, body)
	if err != nil {
		return c.upstreamError(r, err)
	}
	st.mu.Lock()
	st.versions, st.list = versions, list
	st.etag, st.lastMod = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	st.fetched = c.opts.Now()
	st.mu.Unlock()
	c.index.Drop(r.Name)
	return nil
}

// indexDoc is a Helm repository index as JSON (YAML converted).
type indexDoc struct {
	APIVersion string                       `json:"apiVersion"`
	Entries    map[string][]json.RawMessage `json:"entries"`
}

// entryDoc is what the cache reads of one index entry; the whole entry
// is kept as the version's metadata, so the index served lists what the
// upstream's does.
type entryDoc struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
	Created string   `json:"created"`
}

// parseIndex reads an upstream index: the versions that pass r's
// filters, with names and versions as Helm accepts them (an entry that
// is not is skipped, as Helm's client skips it).
func parseIndex(r *chartctl.Repository, b *url.URL, body []byte) (map[string]*upstreamVersion, []*chartctl.ChartVersion, error) {
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, nil, fmt.Errorf("its index.yaml is not YAML: %w", err)
	}
	var doc indexDoc
	if err := json.Unmarshal(j, &doc); err != nil {
		return nil, nil, fmt.Errorf("its index.yaml is not a Helm repository index: %w", err)
	}
	if doc.APIVersion == "" && doc.Entries == nil {
		return nil, nil, errors.New("its index.yaml is not a Helm repository index (no apiVersion, no entries)")
	}
	versions := map[string]*upstreamVersion{}
	var list []*chartctl.ChartVersion
	for name, entries := range doc.Entries {
		if chart.ValidateName(name) != nil || !r.Proxy.Allows(name) {
			continue
		}
		for _, raw := range entries {
			var e entryDoc
			if json.Unmarshal(raw, &e) != nil || (e.Name != "" && e.Name != name) || chart.ValidateVersion(e.Version) != nil || len(e.URLs) == 0 {
				continue
			}
			ref, err := url.Parse(e.URLs[0])
			if err != nil {
				continue
			}
			var md chart.Metadata
			if json.Unmarshal(raw, &md) != nil {
				continue
			}
			created, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(e.Created))
			digest := strings.ToLower(strings.TrimPrefix(e.Digest, "sha256:"))
			k := vkey(name, e.Version)
			if versions[k] != nil {
				continue
			}
			versions[k] = &upstreamVersion{url: b.ResolveReference(ref).String(), digest: digest, created: created}
			cv := &chartctl.ChartVersion{Repository: r.Name, Name: name, Version: e.Version, AppVersion: md.AppVersion,
				Description: md.Description, Keywords: md.Keywords, CreatedAt: created, Metadata: raw}
			if digest != "" {
				cv.Digest = "sha256:" + digest
			}
			list = append(list, cv)
		}
	}
	return versions, list, nil
}

// upstreamError is the EUPSTREAM error of a failure to use r's upstream:
// its host named, the reason worded as for a person (a connection's
// failure without the server's resolver or addresses).
func (c *Cache) upstreamError(r *chartctl.Repository, err error) error {
	u, _ := url.Parse(r.Proxy.URL)
	host := r.Proxy.URL
	if u != nil {
		host = u.Host
	}
	reason := err.Error()
	var ue *url.Error
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, netguard.ErrPrivateTarget):
		reason = "it is at a private or loopback address, which this server does not reach (its operator can allow it with " + app.FlagAllowPrivateUpstreams + ")"
	case errors.As(err, &dns) || errors.As(err, &op) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Timeout()):
		reason = strings.TrimPrefix(neterr.Describe(host, err), "could not connect to "+host+": ")
	case errors.As(err, &ue):
		reason = ue.Err.Error()
	}
	return chartctl.Errorf(chartctl.EUPSTREAM, "The upstream %s of proxy repository %q failed (%s) and nothing it serves for this request is cached here; try again later.", host, r.Name, reason)
}

// Fetch makes sure version of chart name of the proxy repository r is
// stored here, fetching it from the upstream on a miss. Returns
// ENOTFOUND when the upstream's index does not list it (or r's filters
// exclude it), EUPSTREAM when the upstream failed, and the application
// layer's refusal (EPOLICY…) when the archive may not be stored.
func (c *Cache) Fetch(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if !r.Proxy.Allows(name) {
		return nil, app.ChartNotFound(r.Name, name, version)
	}
	if _, _, ok := app.OCIUpstream(r); ok {
		return c.ociFetch(ctx, r, name, version)
	}
	st := c.state(r)
	cv, err := c.app.ChartVersion(ctx, r, name, version)
	if err == nil {
		st.hits.Add(1)
		c.hit.Inc()
		return cv, nil
	} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return nil, err
	}
	st.misses.Add(1)
	c.miss.Inc()
	if err := c.once(ctx, st, vkey(name, version), func(fctx context.Context) error {
		return c.fill(fctx, r, st, name, version)
	}); err != nil {
		return nil, err
	}
	return c.app.ChartVersion(ctx, r, name, version)
}

// fill fetches one version from r's upstream and stores it, once across
// replicas.
func (c *Cache) fill(ctx context.Context, r *chartctl.Repository, st *repoState, name, version string) error {
	k := vkey(name, version)
	st.mu.Lock()
	uv := st.versions[k]
	st.mu.Unlock()
	if uv == nil {
		// Not in the index at hand: a newer one may list it.
		if _, err := c.refresh(ctx, r, st); err != nil {
			return err
		}
		st.mu.Lock()
		uv = st.versions[k]
		st.mu.Unlock()
		if uv == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q version %q is not in proxy repository %q's upstream (%s).", name, version, r.Name, r.Proxy.URL)
		}
	}
	present := func() bool {
		_, err := c.app.Store.ChartVersion(ctx, r.Name, name, version)
		return err == nil
	}
	// Not k: PostgreSQL stores no NUL in a lease's name.
	return c.leased(ctx, r, "proxy:"+r.ID+":"+name+"@"+version, present, func() error {
		err := c.download(ctx, r, uv, name, version)
		c.health(r, st, err)
		return err
	})
}

// once runs fill for the object k of st once for all callers at a time
// (single flight), bounded by FileTimeout and not cut short by a caller
// going away; a failure is remembered for NegativeTTL and answered again
// without asking the upstream.
func (c *Cache) once(ctx context.Context, st *repoState, k string, fill func(context.Context) error) error {
	now := c.opts.Now()
	st.mu.Lock()
	neg, ok := st.negative[k]
	st.mu.Unlock()
	if ok && now.Before(neg.until) {
		return neg.err
	}
	_, err, _ := c.flight.Do("fill\x00"+st.key+"\x00"+k, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.FileTimeout)
		defer cancel()
		return nil, fill(fctx)
	})
	if err != nil {
		if chartctl.ErrorCode(err) == chartctl.EUPSTREAM {
			c.failed.Inc()
		}
		st.mu.Lock()
		if len(st.negative) > 10000 {
			st.negative = map[string]negEntry{}
		}
		st.negative[k] = negEntry{until: c.opts.Now().Add(c.opts.NegativeTTL), err: err}
		st.mu.Unlock()
	}
	return err
}

// leased runs fill under the lease named lease, so one replica fetches an
// object while the others wait for it: fill is skipped when present
// reports the object stored, before the lease or by another replica while
// this one waited.
func (c *Cache) leased(ctx context.Context, r *chartctl.Repository, lease string, present func() bool, fill func() error) error {
	for {
		ok, err := c.app.Store.AcquireLease(ctx, lease, c.opts.Holder, c.opts.LeaseTTL)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		// Another replica is fetching it: wait for it to be stored (or
		// for the lease to be free, if that replica failed).
		select {
		case <-ctx.Done():
			return c.upstreamError(r, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		if present() {
			return nil
		}
	}
	defer func() { _ = c.app.Store.ReleaseLease(context.WithoutCancel(ctx), lease, c.opts.Holder) }()
	if present() {
		return nil
	}
	return fill()
}

// download fetches uv's archive and stores it as name version of r.
func (c *Cache) download(ctx context.Context, r *chartctl.Repository, uv *upstreamVersion, name, version string) error {
	u, err := url.Parse(uv.url)
	if err != nil {
		return c.upstreamError(r, err)
	}
	// The answer's headers within Timeout (the transport's bound); the
	// body within FileTimeout (ctx).
	req, err := c.request(ctx, r, u)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return c.upstreamError(r, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c.upstreamError(r, fmt.Errorf("%s %s answered %s", name, version, resp.Status))
	}
	h := sha256.New()
	body := &readErr{r: resp.Body}
	up, err := c.app.ReceiveArchive(ctx, io.TeeReader(body, h))
	if err != nil {
		// A connection cut mid-archive is the upstream's failure, not a
		// bad archive; an archive that is not a chart is refused as the
		// application layer words it.
		if body.err != nil {
			return c.upstreamError(r, body.err)
		}
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); uv.digest != "" && got != uv.digest {
		return c.app.Reject(up, c.upstreamError(r, fmt.Errorf("the archive of %s %s has sha256 %s but its index announces %s", name, version, got, uv.digest)))
	}
	if up.Chart.Name != name || up.Chart.Version != version {
		return c.app.Reject(up, c.upstreamError(r, fmt.Errorf("the archive listed as %s %s holds %s %s", name, version, up.Chart.Name, up.Chart.Version)))
	}
	if err := c.fetchProv(ctx, r, up, u); err != nil {
		return c.app.Reject(up, err)
	}
	actx := chartctl.WithActor(ctx, &chartctl.Actor{CredentialKind: chartctl.CredentialProxy})
	if _, _, err := c.app.PutProxied(actx, r, up, uv.created); err != nil {
		return err
	}
	// Retention counts from the fill (the pull that asked for it is
	// counted on its own, as every pull is).
	if err := c.app.MarkProxyFilled(ctx, r, name, version); err != nil {
		c.opts.Logger.Warn("proxy fill: record its time", "repository", r.Name, "chart", name, "version", version, "err", err)
	}
	c.opts.Logger.Info("proxy filled", "repository", r.Name, "chart", name, "version", version, "upstream", r.Proxy.URL)
	return nil
}

// readErr remembers the first read error of r other than io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}
