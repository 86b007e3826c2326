// Package registry is chartctl's OCI registry: the OCI Distribution
// Specification 1.1 at /v2/ (CONTRACT §11), on the domain's stores.
//
// Names are "<repository>/<path…>", whose first segment is a chartctl
// repository; access follows the repository's visibility and the caller's
// role and scopes. Blob bytes live in the content-addressed blob store, so a
// chart archive is stored once whichever protocol brought it; manifests,
// tags, the referrers index, blob links and upload sessions live in an
// OCIStore. A Helm chart pushed over OCI becomes a chart version of its
// repository (see charts.go), and every chart version is pullable over OCI.
//
// One file per resource, as distribution/distribution's registry/handlers:
// base.go (ping, token), catalog.go, blobs.go, uploads.go, manifests.go,
// tags.go, referrers.go; auth.go holds authorization, errors.go the spec's
// error codes, gc.go garbage collection.
package registry

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// Config holds the registry's tunables. Start from DefaultConfig.
type Config struct {
	// BaseURL is the externally visible URL of the server, used in the
	// token realm and Location headers ("" derives it from each request).
	BaseURL string
	// Service is the service name of the token challenge ("" uses the
	// base URL's host).
	Service string
	// MaxManifestSize is the largest manifest accepted, in bytes.
	MaxManifestSize int64
	// MaxBlobSize is the largest blob accepted, in bytes.
	MaxBlobSize int64
	// UploadExpiry is how long an upload session lives without a chunk.
	UploadExpiry time.Duration
	// GCInterval is how often garbage collection runs (0: never on its own).
	GCInterval time.Duration
	// GCGrace spares blobs linked more recently than this from garbage
	// collection, so a push between its blob and its manifest keeps them.
	GCGrace time.Duration
	// TokenExpiry is the expires_in the token endpoint reports.
	TokenExpiry time.Duration
	// IdleTimeout cuts a blob transfer after this long without a byte
	// (0: the server's own timeouts apply).
	IdleTimeout time.Duration
	// UploadDir holds the partial data of upload sessions; it must be on
	// persistent storage so a chunked push survives a restart.
	UploadDir string
}

// DefaultConfig returns the documented defaults (docs/oci.md).
func DefaultConfig() Config {
	return Config{
		MaxManifestSize: 4 << 20,
		MaxBlobSize:     10 << 30,
		UploadExpiry:    24 * time.Hour,
		GCInterval:      time.Hour,
		GCGrace:         24 * time.Hour,
		TokenExpiry:     time.Hour,
		IdleTimeout:     60 * time.Second,
	}
}

// Registry serves /v2/. Set the fields (New fills the stores), then
// Register it on the server's router.
type Registry struct {
	// App is the application layer: repositories and chart versions are
	// read, and charts pushed over OCI written, through it, and its digest
	// locks guard blob commits against orphan deletion.
	App *app.App
	// OCI holds manifests, tags, blob links and upload sessions.
	OCI chartctl.OCIStore
	// Blobs holds blob bytes (the App's blob store, addressed by sha256 or
	// sha512).
	Blobs chartctl.AlgorithmBlobStore
	// Auth resolves credentials (the server); nil admits anonymous pulls
	// only.
	Auth httpx.Authenticator
	// Limits charges writes to `global` and pushed chart versions to the
	// UploadBucket (the server); nil disables rate limiting.
	Limits httpx.Limiter
	// UploadBucket names the per-repository upload bucket.
	UploadBucket string
	// Uploads caps the uploads (blob chunks and manifests) one credential
	// sends at once (the server); nil: no cap.
	Uploads httpx.UploadGate
	// Config holds the tunables.
	Config Config
	// Logger receives errors.
	Logger *slog.Logger
	// Now is the clock.
	Now func() time.Time
	// SessionKey, when set, keys upload session IDs so that a session
	// needs no record until its first chunk (sessionid.go). Every replica
	// must have the same key; nil stores each session when it starts.
	SessionKey []byte

	initOnce sync.Once
	sessions keyedLocks
	derived  derivedCache
	digests  chartDigests
	absent   absentCache
	headers  headerCache
	links    linker
}

// New returns a Registry over the application layer a, the OCI metadata
// store oci and the blob store blobs (a's), with DefaultConfig, keeping
// upload data in uploadDir.
func New(a *app.App, oci chartctl.OCIStore, blobs chartctl.AlgorithmBlobStore, uploadDir string) *Registry {
	cfg := DefaultConfig()
	cfg.UploadDir = uploadDir
	return &Registry{App: a, OCI: oci, Blobs: blobs, Config: cfg, UploadBucket: ratelimit.Upload}
}

func (r *Registry) init() {
	r.initOnce.Do(func() {
		if r.Logger == nil {
			r.Logger = slog.New(slog.DiscardHandler)
		}
		if r.Now == nil {
			r.Now = time.Now
		}
		if r.Config.UploadDir != "" {
			if err := os.MkdirAll(r.Config.UploadDir, 0o750); err != nil {
				r.Logger.Error("create upload directory", "err", err)
			}
		}
	})
}

// Register adds the registry's routes to e: everything under /v2.
func (r *Registry) Register(e *echo.Echo) {
	if r.App != nil {
		// Only the registry derives manifests, so it tells the
		// application layer where a version's signatures hang.
		r.App.ChartManifestDigests = r.versionManifestDigests
	}
	e.Any("/v2", r.handle)
	e.Any("/v2/*", r.handle)
}

// route is one resource of the API.
type route struct {
	// name names the resource for the audit log (writeAction).
	name string
	// methods lists the methods the resource answers, for 405's Allow.
	methods []string
	handle  func(r *Registry, c echo.Context, m pathMatch) error
}

// pathMatch is what the path after /v2/ names: m[1] the repository name
// and m[2] the reference (a tag, digest or upload session) where the
// route has them.
type pathMatch [3]string

// The resources of the API.
var (
	routeBase        = &route{"base", []string{"GET", "HEAD"}, (*Registry).handleBase}
	routeToken       = &route{"token", []string{"GET"}, (*Registry).handleToken}
	routeCatalog     = &route{"catalog", []string{"GET"}, (*Registry).handleCatalog}
	routeManifest    = &route{"manifest", []string{"GET", "HEAD", "PUT", "DELETE"}, (*Registry).handleManifest}
	routeStartUpload = &route{"startUpload", []string{"POST"}, (*Registry).handleStartUpload}
	routeUpload      = &route{"upload", []string{"GET", "PATCH", "PUT", "DELETE"}, (*Registry).handleUpload}
	routeBlob        = &route{"blob", []string{"GET", "HEAD", "DELETE"}, (*Registry).handleBlob}
	routeTags        = &route{"tags", []string{"GET"}, (*Registry).handleTags}
	routeReferrers   = &route{"referrers", []string{"GET"}, (*Registry).handleReferrers}
)

// matchPath finds the resource of path, the request path after "/v2/":
//
//	""                              base
//	token, _catalog
//	NAME/manifests/REF
//	NAME/blobs/uploads, NAME/blobs/uploads/    start an upload
//	NAME/blobs/uploads/ID
//	NAME/blobs/DIGEST
//	NAME/tags/list
//	NAME/referrers/DIGEST
//
// NAME is one or more segments (it may itself contain "blobs" or
// "manifests"); it is told from the resource by the last segments alone,
// so uploads win over a blob named "uploads", as the specification's
// routes do. It reads the path once from its end and allocates nothing.
func matchPath(path string) (*route, pathMatch) {
	switch path {
	case "":
		return routeBase, pathMatch{}
	case "token":
		return routeToken, pathMatch{}
	case "_catalog":
		return routeCatalog, pathMatch{}
	}
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return nil, pathMatch{}
	}
	last, rest := path[i+1:], path[:i]
	if last == "" {
		// Only NAME/blobs/uploads/ ends with a slash.
		if name, ok := strings.CutSuffix(rest, "/blobs/uploads"); ok && validPathName(name) {
			return routeStartUpload, pathMatch{path, name}
		}
		return nil, pathMatch{}
	}
	j := strings.LastIndexByte(rest, '/')
	if j < 0 {
		return nil, pathMatch{}
	}
	kind, name := rest[j+1:], rest[:j]
	if kind == "uploads" {
		// NAME/blobs/uploads/ID
		k := strings.LastIndexByte(name, '/')
		if k < 0 || name[k+1:] != "blobs" || !validPathName(name[:k]) {
			return nil, pathMatch{}
		}
		return routeUpload, pathMatch{path, name[:k], last}
	}
	if !validPathName(name) {
		return nil, pathMatch{}
	}
	switch kind {
	case "manifests":
		return routeManifest, pathMatch{path, name, last}
	case "blobs":
		if last == "uploads" {
			return routeStartUpload, pathMatch{path, name}
		}
		return routeBlob, pathMatch{path, name, last}
	case "tags":
		if last == "list" {
			return routeTags, pathMatch{path, name}
		}
	case "referrers":
		return routeReferrers, pathMatch{path, name, last}
	}
	return nil, pathMatch{}
}

// validPathName reports whether a name taken from the path can be one:
// not empty, and on one line. (Whether it is a valid OCI name is the
// handlers' question, answered with NAME_INVALID.)
func validPathName(name string) bool {
	return name != "" && strings.IndexByte(name, '\n') < 0
}

// hdrAPIVersion is the Docker-Distribution-API-Version of every answer
// (assigned, never modified; capacity equal to length, so an Add copies).
var hdrAPIVersion = []string{"registry/2.0"}[:1:1]

// handle answers a request under /v2. Errors are answered here, in the
// OCI error body, never by the server's /v1 envelope.
func (r *Registry) handle(c echo.Context) error {
	r.init()
	w, req := c.Response(), c.Request()
	w.Header()["Docker-Distribution-Api-Version"] = hdrAPIVersion
	path := strings.TrimPrefix(req.URL.Path, "/v2")
	path = strings.TrimPrefix(path, "/")
	rt, m := matchPath(path)
	if rt == nil {
		r.writeError(c, &Error{Status: http.StatusNotFound, Code: CodeNameUnknown, Message: "No such registry endpoint."})
		return nil
	}
	if !slices.Contains(rt.methods, req.Method) {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		r.writeError(c, errUnsupported("The method %s is not allowed here.", req.Method).withStatus(http.StatusMethodNotAllowed))
		return nil
	}
	if err := rt.handle(r, c, m); err != nil {
		r.writeError(c, err)
		r.auditRefusal(c, rt.name, m[1], err)
	}
	return nil
}

// baseURL returns the externally visible URL of the server.
func (r *Registry) baseURL(req *http.Request) string {
	if r.Config.BaseURL != "" {
		return strings.TrimSuffix(r.Config.BaseURL, "/")
	}
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + req.Host
}

// service returns the service name of the token challenge.
func (r *Registry) service(req *http.Request) string {
	if r.Config.Service != "" {
		return r.Config.Service
	}
	u := r.baseURL(req)
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	return strings.TrimSuffix(u, "/")
}

// uploadPath returns the file of an upload session's data.
func (r *Registry) uploadPath(id string) string { return filepath.Join(r.Config.UploadDir, id) }

// keyedLocks serializes work per key (an upload session).
type keyedLocks struct {
	stripes [64]sync.Mutex
}

// Lock takes key's lock and returns its release.
func (l *keyedLocks) Lock(key string) func() {
	var h uint32
	for i := 0; i < len(key); i++ {
		h = h*31 + uint32(key[i])
	}
	m := &l.stripes[h%uint32(len(l.stripes))]
	m.Lock()
	return m.Unlock
}
