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
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
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
	}
}

// Authenticator resolves a credential sent to the registry.
type Authenticator interface {
	// Principal returns who the credential (an API key or OAuth access
	// token, from Bearer or from the password of HTTP Basic) acts for. It
	// returns EUNAUTHORIZED for an unknown, expired or revoked credential,
	// ERATELIMIT for a client throttled after failures (the registry then
	// answers 429), and may consult r for the client's address.
	Principal(r *http.Request, credential string) (*chartctl.Principal, error)
}

// DigestLocker serializes work on one blob digest.
type DigestLocker interface {
	// Lock takes the digest's lock and returns its release.
	Lock(digest string) (unlock func())
}

// Limiter charges requests to the rate limit buckets of CONTRACT §7
// (*ratelimit.Set is one).
type Limiter interface {
	// Take charges one unit to every request's bucket and key, all or
	// nothing.
	Take(reqs ...ratelimit.Request) ratelimit.Decision
}

// Registry serves /v2/. Set the fields, then Register it or serve it as an
// http.Handler at /v2/.
type Registry struct {
	// Store holds repositories and chart versions (read only here).
	Store chartctl.Store
	// OCI holds manifests, tags, blob links and upload sessions.
	OCI chartctl.OCIStore
	// Blobs holds blob bytes.
	Blobs chartctl.AlgorithmBlobStore
	// Auth resolves credentials; nil admits only anonymous pulls.
	Auth Authenticator
	// Limits charges writes to `global` and pushed chart versions to
	// `upload`; nil disables rate limiting.
	Limits Limiter
	// Charts stores and deletes chart versions; nil refuses chart pushes.
	Charts Charts
	// Locks serializes, per blob digest, committing a blob and recording
	// what refers to it against deleting it as unreferenced. Share the
	// server's (its chart uploads take the same locks); nil uses the
	// registry's own.
	Locks DigestLocker
	// Config holds the tunables.
	Config Config
	// Logger receives errors.
	Logger *slog.Logger
	// Now is the clock.
	Now func() time.Time

	initOnce sync.Once
	sessions keyedLocks
	digests  keyedLocks
}

// New returns a Registry over its stores with DefaultConfig, keeping upload
// data in uploadDir.
func New(store chartctl.Store, oci chartctl.OCIStore, blobs chartctl.AlgorithmBlobStore, uploadDir string) *Registry {
	cfg := DefaultConfig()
	cfg.UploadDir = uploadDir
	return &Registry{Store: store, OCI: oci, Blobs: blobs, Config: cfg}
}

func (r *Registry) init() {
	r.initOnce.Do(func() {
		if r.Logger == nil {
			r.Logger = slog.New(slog.DiscardHandler)
		}
		if r.Now == nil {
			r.Now = time.Now
		}
		if r.Locks == nil {
			r.Locks = &r.digests
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
	h := echo.WrapHandler(r)
	e.Any("/v2", h)
	e.Any("/v2/*", h)
}

// route is one resource of the API, matched on the path after /v2/.
type route struct {
	re      *regexp.Regexp
	methods string
	handle  func(r *Registry, w http.ResponseWriter, req *http.Request, m []string) error
}

// routes, tried in order: uploads before blobs, since a name may end in
// "blobs".
var routes = []route{
	{regexp.MustCompile(`^$`), "GET HEAD", (*Registry).handleBase},
	{regexp.MustCompile(`^token$`), "GET", (*Registry).handleToken},
	{regexp.MustCompile(`^_catalog$`), "GET", (*Registry).handleCatalog},
	{regexp.MustCompile(`^(.+)/manifests/([^/]+)$`), "GET HEAD PUT DELETE", (*Registry).handleManifest},
	{regexp.MustCompile(`^(.+)/blobs/uploads/?$`), "POST", (*Registry).handleStartUpload},
	{regexp.MustCompile(`^(.+)/blobs/uploads/([^/]+)$`), "GET PATCH PUT DELETE", (*Registry).handleUpload},
	{regexp.MustCompile(`^(.+)/blobs/([^/]+)$`), "GET HEAD DELETE", (*Registry).handleBlob},
	{regexp.MustCompile(`^(.+)/tags/list$`), "GET", (*Registry).handleTags},
	{regexp.MustCompile(`^(.+)/referrers/([^/]+)$`), "GET", (*Registry).handleReferrers},
}

// ServeHTTP answers a request under /v2.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.init()
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	path := strings.TrimPrefix(req.URL.Path, "/v2")
	path = strings.TrimPrefix(path, "/")
	for _, rt := range routes {
		m := rt.re.FindStringSubmatch(path)
		if m == nil {
			continue
		}
		if !strings.Contains(" "+rt.methods+" ", " "+req.Method+" ") {
			w.Header().Set("Allow", strings.ReplaceAll(rt.methods, " ", ", "))
			r.writeError(w, req, errUnsupported("The method %s is not allowed here.", req.Method).withStatus(http.StatusMethodNotAllowed))
			return
		}
		if err := rt.handle(r, w, req, m); err != nil {
			r.writeError(w, req, err)
		}
		return
	}
	r.writeError(w, req, &Error{Status: http.StatusNotFound, Code: CodeNameUnknown, Message: "No such registry endpoint."})
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

// newID returns a new unguessable identifier.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

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

