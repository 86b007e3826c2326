// Package helmrepo serves every chartctl repository as a plain Helm
// repository (CONTRACT §8: index.yaml and chart archives under
// /helm/:repo) and answers ChartMuseum's API under /helm/api so
// `helm cm-push` works unchanged. Public repositories need no credential;
// private ones take HTTP Basic (any user name, the API key or access token
// as password) or Bearer.
//
// The protocol sits on the application layer (internal/app): reads and
// writes go through it, so the rules are those of every other protocol.
package helmrepo

import (
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/coalesce"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/httpx"
)

// ContextPath is where the protocol is mounted; index.yaml advertises it
// as serverInfo.contextPath for `helm cm-push`.
const ContextPath = "/helm"

// Handler serves the Helm repository protocol and the ChartMuseum API.
type Handler struct {
	// App is the application layer.
	App *app.App
	// Auth resolves optional credentials.
	Auth httpx.Authenticator
	// Limits charges writes to the rate-limit buckets.
	Limits httpx.Limiter
	// Uploads bounds the uploads a credential runs at once; nil: no cap.
	Uploads httpx.UploadGate
	// Logger receives internal errors.
	Logger *slog.Logger
	// UploadBucket is the name of the per-repository upload bucket.
	UploadBucket string

	files fileNames
}

// fileNames remembers how archive file names read as chart names and
// versions (chart.ArchiveFileCandidates, a SemVer parse per dash), as
// every download of a chart asks again. The reading of a name never
// changes; the map starts over when it is full.
type fileNames struct {
	mu sync.RWMutex
	m  map[string][]chart.NameVersion
}

// maxFileNames bounds the names remembered.
const maxFileNames = 8192

// candidates returns chart.ArchiveFileCandidates(file). The slice is
// shared: do not modify it.
func (f *fileNames) candidates(file string) []chart.NameVersion {
	f.mu.RLock()
	nv, ok := f.m[file]
	f.mu.RUnlock()
	if ok {
		return nv
	}
	nv = chart.ArchiveFileCandidates(file)
	f.mu.Lock()
	if f.m == nil || len(f.m) >= maxFileNames {
		f.m = map[string][]chart.NameVersion{}
	}
	f.m[file] = nv
	f.mu.Unlock()
	return nv
}

// Register adds the protocol's routes to e under ContextPath.
func (h *Handler) Register(e *echo.Echo) {
	g := e.Group(ContextPath, httpx.UnescapePathParams)
	g.GET("/:repo/index.yaml", h.handleIndex)
	g.HEAD("/:repo/index.yaml", h.handleIndex)
	g.GET("/:repo/artifacthub-repo.yml", h.handleArtifactHub)
	g.HEAD("/:repo/artifacthub-repo.yml", h.handleArtifactHub)
	g.GET("/:repo/charts/:file", h.handleDownload)
	g.HEAD("/:repo/charts/:file", h.handleDownload)
	// The per-chart and newest-N indexes are Helm repositories of their
	// own: Helm resolves an entry's relative URL charts/NAME-VERSION.tgz
	// against them, so their archives are served below them too.
	g.GET("/:repo/charts/:name/index.yaml", h.handleIndex)
	g.HEAD("/:repo/charts/:name/index.yaml", h.handleIndex)
	g.GET("/:repo/charts/:name/charts/:file", h.handleDownload)
	g.HEAD("/:repo/charts/:name/charts/:file", h.handleDownload)
	g.GET("/:repo/latest/:n/index.yaml", h.handleIndex)
	g.HEAD("/:repo/latest/:n/index.yaml", h.handleIndex)
	g.GET("/:repo/latest/:n/charts/:file", h.handleDownload)
	g.HEAD("/:repo/latest/:n/charts/:file", h.handleDownload)
	g.GET("/api/:repo/charts", h.handleCMList)
	g.POST("/api/:repo/charts", h.handleCMUpload)
	g.GET("/api/:repo/charts/:name", h.handleCMVersions)
	g.GET("/api/:repo/charts/:name/:version", h.handleCMVersion)
	// ChartMuseum's existence checks: the chart (any version), a version.
	g.HEAD("/api/:repo/charts/:name", h.handleCMVersions)
	g.HEAD("/api/:repo/charts/:name/:version", h.handleCMVersion)
	g.DELETE("/api/:repo/charts/:name/:version", h.handleCMDelete)
}

// basicChallenge makes Helm prompt for a user name and password.
const basicChallenge = `Basic realm="chartctl"`

func unauthorized(c echo.Context, msg string) error {
	c.Response().Header().Set("WWW-Authenticate", basicChallenge)
	return chartctl.Errorf(chartctl.EUNAUTHORIZED, "%s", msg)
}

// repo loads the :repo repository for reading through the Helm protocol:
// public ones for anyone, private ones with a credential that may read
// it. Without a credential a private or unknown repository is 401 (so
// Helm prompts for credentials and existence is not revealed).
func (h *Handler) repo(c echo.Context) (*chartctl.Repository, *chartctl.Principal, error) {
	p, err := h.Auth.OptionalPrincipal(c, basicChallenge)
	if err != nil {
		return nil, nil, err
	}
	ctx := c.Request().Context()
	name := c.Param("repo")
	// A repository anyone may read needs no more checks; any other goes
	// through the credential's.
	r, err := h.App.Repository(ctx, name)
	if err == nil && anonymous.CanSeeRepo(r) {
		return r, p, nil
	} else if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return nil, nil, err
	}
	if p == nil {
		return nil, nil, unauthorized(c, "Authentication required: use your API key as the password.")
	}
	r, err = h.App.ReadableRepo(ctx, p, name)
	return r, p, err
}

// anonymous is the caller without a credential.
var anonymous *chartctl.Principal

// Header values every index.yaml response shares (assigned, never
// modified; capacity equal to length, so an Add elsewhere copies).
var (
	hdrVary        = []string{"Accept-Encoding"}[:1:1]
	hdrNoCache     = []string{"no-cache"}[:1:1]
	hdrGzip        = []string{"gzip"}[:1:1]
	hdrGzipName    = http.CanonicalHeaderKey("Content-Encoding")
	hdrLengthName  = http.CanonicalHeaderKey("Content-Length")
	hdrTypeName    = http.CanonicalHeaderKey("Content-Type")
	hdrVaryName    = http.CanonicalHeaderKey("Vary")
	hdrCacheName   = http.CanonicalHeaderKey("Cache-Control")
	hdrETagName    = http.CanonicalHeaderKey("ETag")
	hdrIfNoneMatch = http.CanonicalHeaderKey("If-None-Match")
	hdrLastModName = http.CanonicalHeaderKey("Last-Modified")
	hdrIfModSince  = http.CanonicalHeaderKey("If-Modified-Since")
)

// indexQuery reads which view of the index a request asks for: the
// per-chart index under charts/:name, the newest-N one under latest/:n,
// in the repository's index format.
func indexQuery(c echo.Context, r *chartctl.Repository) (helmindex.Query, error) {
	q := helmindex.Query{Chart: c.Param("name"), Format: helmindex.FormatOf(r.IndexFormat)}
	if s := c.Param("n"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > helmindex.MaxLatest {
			return q, chartctl.Invalid("n", "%q is not a number of versions: use /helm/%s/latest/N with N from 1 to %d.", s, r.Name, helmindex.MaxLatest)
		}
		q.Latest = n
	}
	return q, nil
}

// notModified reports whether the request's validators match idx: its
// If-None-Match or, only without one (RFC 9110 §13.2.2), its
// If-Modified-Since against the index's generated time.
func notModified(req *http.Request, idx *helmindex.Index) bool {
	if inm := req.Header.Get(hdrIfNoneMatch); inm != "" {
		return etagMatch(inm, idx.ETag)
	}
	ims := req.Header.Get(hdrIfModSince)
	if ims == "" {
		return false
	}
	t, err := http.ParseTime(ims)
	// HTTP dates have whole seconds; generated has nanoseconds.
	return err == nil && !idx.Generated.Truncate(time.Second).After(t)
}

// handleIndex serves index.yaml from pre-rendered bytes, with a strong
// ETag and gzip when the client accepts it. The header values come
// formatted with the index, and the body is written as rendered: a
// request formats and copies nothing.
func (h *Handler) handleIndex(c echo.Context) error {
	r, _, err := h.repo(c)
	if err != nil {
		return err
	}
	q, err := indexQuery(c, r)
	if err != nil {
		return err
	}
	var (
		idx   *helmindex.Index
		stale bool
	)
	if r.Proxy != nil && h.App.Proxies != nil {
		idx, stale, err = h.App.Proxies.Index(c.Request().Context(), r, q)
	} else {
		idx, err = h.App.Index.View(c.Request().Context(), r.Name, q)
	}
	if err != nil {
		return err
	}
	req, resp := c.Request(), c.Response()
	hd := resp.Header()
	if stale {
		// RFC 7234 §5.5.1: the upstream failed; this is the cached index.
		hd.Set("Warning", StaleWarning)
	}
	hd[hdrETagName] = idx.ETagHeader
	hd[hdrLastModName] = idx.LastModifiedHeader
	hd[hdrVaryName] = hdrVary
	hd[hdrCacheName] = hdrNoCache
	if notModified(req, idx) {
		resp.WriteHeader(http.StatusNotModified)
		return nil
	}
	body, length := idx.Body, idx.LengthHeader
	if acceptsGzip(req.Header.Get("Accept-Encoding")) {
		body, length = idx.Gzip(), idx.GzipLengthHeader()
		hd[hdrGzipName] = hdrGzip
		if path := idx.GzipFile(); path != "" {
			// A large index goes from the page cache to the socket by
			// sendfile. The file exists while idx is held; should it
			// still fail to open, memory has the same bytes.
			if f, err := os.Open(path); err == nil {
				defer f.Close()
				hd[hdrLengthName] = length
				hd[hdrTypeName] = idx.TypeHeader
				return httpx.SendFile(c, f, int64(len(body)))
			}
		}
	}
	// A known length spares both sides chunked encoding of a large body.
	hd[hdrLengthName] = length
	hd[hdrTypeName] = idx.TypeHeader
	resp.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	_, err = coalesce.Write(resp, req, body)
	return err
}

// etagMatch reports whether an If-None-Match header matches etag (weak
// comparison, as RFC 9110 §13.1.2 asks for If-None-Match).
func etagMatch(header, etag string) bool {
	for header != "" {
		var t string
		t, header, _ = strings.Cut(header, ",")
		t = strings.TrimSpace(t)
		if t == "*" || t == etag || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip: a
// gzip (or x-gzip) coding whose quality value is not zero (RFC 9110
// §12.5.3; "q=0", "q=0.0" and "Q=0.000" all refuse it).
func acceptsGzip(header string) bool {
	for header != "" {
		var part string
		part, header, _ = strings.Cut(header, ",")
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		enc = strings.TrimSpace(enc)
		if !strings.EqualFold(enc, "gzip") && !strings.EqualFold(enc, "x-gzip") {
			continue
		}
		return qualityNonZero(params)
	}
	return false
}

// qualityNonZero reports whether the parameters of an Accept-Encoding
// element leave its weight above zero. A malformed weight counts as zero.
func qualityNonZero(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err == nil && q > 0
	}
	return true
}

// StaleWarning is the Warning header of a proxy repository's answer
// served from the cache because its upstream failed.
const StaleWarning = `110 - "Response is Stale"`

// handleDownload serves charts/NAME-VERSION.tgz and its .tgz.prov.
func (h *Handler) handleDownload(c echo.Context) error {
	r, _, err := h.repo(c)
	if err != nil {
		return err
	}
	file := c.Param("file")
	prov := strings.HasSuffix(file, ".prov")
	// "app-2-1.0.0.tgz" reads as app 2-1.0.0 or app-2 1.0.0: serve the
	// first reading that exists.
	var cv *chartctl.ChartVersion
	get := h.App.ChartVersion
	if r.Proxy != nil && h.App.Proxies != nil {
		// A proxy fetches what it has not cached yet.
		get = h.App.Proxies.Fetch
	}
	for _, nv := range h.files.candidates(strings.TrimSuffix(file, ".prov")) {
		if c.Param("name") != "" && nv.Name != c.Param("name") {
			continue
		}
		found, err := get(c.Request().Context(), r, nv.Name, nv.Version)
		if err == nil {
			cv = found
			break
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
	}
	// Below a per-chart index only that chart's archives are found.
	if cv == nil || (c.Param("name") != "" && cv.Name != c.Param("name")) {
		return chartctl.Errorf(chartctl.ENOTFOUND, "No chart archive %q in repository %q.", file, r.Name)
	}
	// A held version is served to nobody (CONTRACT §18).
	if err := h.App.ServableVersion(c.Request().Context(), httpx.PrincipalOf(c), cv); err != nil {
		return err
	}
	if prov {
		if cv.ProvDigest == "" {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s %s has no provenance file.", cv.Name, cv.Version)
		}
		return httpx.ServeBlob(c, h.App, cv.ProvDigest, file, "application/pgp-signature")
	}
	if c.Request().Method == http.MethodGet {
		h.App.CountDownload(r.Name, cv.Name, cv.Version)
	}
	return httpx.ServeBlob(c, h.App, cv.Digest, file, "application/gzip")
}
