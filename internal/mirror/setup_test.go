package mirror_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/server"
)

// TestMain holds this package's API traffic to the OpenAPI document, as
// the server's own suite is.
func TestMain(m *testing.M) {
	if err := testkit.ValidateOpenAPI(server.OpenAPIDocument()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(pgtest.Main(m))
}

// env is a real chartctl server (bbolt in a temp dir, the real router on
// 127.0.0.1, the OCI registry mounted as `chartctl serve` mounts it) and
// a Syncer over its application layer, woken by it as in serve.
type env struct {
	*testkit.Server
	Syncer *mirror.Syncer
}

type envOptions struct {
	// denyPrivate keeps the default: private upstreams refused, by the
	// API when saved and by the dialer when connecting.
	denyPrivate bool
	now         func() time.Time
	// maxIndexSize is --upstream-index-max-size (0: its default).
	maxIndexSize int64
	// ociPageSize is the page size asked of oci:// upstreams.
	ociPageSize int
	// plainHTTP is --plain-http-upstreams.
	plainHTTP []string
}

func setup(t *testing.T, o envOptions) *env {
	t.Helper()
	var sy *mirror.Syncer
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Config.AllowPrivateUpstreams = !o.denyPrivate
		s.Config.PlainHTTPUpstreams = o.plainHTTP
		// The tests poll; the limits have their own tests.
		s.Config.GlobalLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits = s, s
			reg.Register(e)
		}
		sy = mirror.New(s.App(), s.Secrets, mirror.Options{Allow: netguard.Allowance{All: !o.denyPrivate}, Now: o.now, MaxIndexSize: o.maxIndexSize, OCIPageSize: o.ociPageSize})
		s.App().WakeMirror = sy.Request
	})
	return &env{Server: ts, Syncer: sy}
}

// repo returns the repository as GET /v1/repositories/:repo shows it.
func (e *env) repo(t *testing.T, name string) client.Repository {
	t.Helper()
	r := e.Do(t, "GET", "/v1/repositories/"+name, e.AdminKey, nil)
	if r.StatusCode != 200 {
		t.Fatalf("get %s: %d %s", name, r.StatusCode, r.Body)
	}
	var env struct{ Data client.Repository }
	r.JSON(t, &env)
	return env.Data
}

// createMirror creates a mirror through the API and returns its item.
func (e *env) createMirror(t *testing.T, name string, m map[string]string) client.Repository {
	t.Helper()
	r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, map[string]any{"name": name, "mirror": m})
	if r.StatusCode != 200 {
		t.Fatalf("create mirror %s: %d %s", name, r.StatusCode, r.Body)
	}
	var env struct{ Data client.Repository }
	r.JSON(t, &env)
	return env.Data
}

// versions lists "name@version" of the repository's charts.
func (e *env) versions(t *testing.T, repo string) []string {
	t.Helper()
	r := e.Do(t, "GET", "/v1/repositories/"+repo+"/charts?limit=100", e.AdminKey, nil)
	if r.StatusCode != 200 {
		t.Fatalf("list %s: %d %s", repo, r.StatusCode, r.Body)
	}
	var env struct{ Data []client.Chart }
	r.JSON(t, &env)
	out := []string{}
	for _, c := range env.Data {
		out = append(out, c.Name+"@"+c.Version)
	}
	sort.Strings(out)
	return out
}

// staticRepo is a static Helm repository whose index.yaml is written here
// (the real `helm repo index` makes the one of TestMirrorFollowsUpstream):
// archives from testkit.MakeChart under charts/, served on 127.0.0.1,
// optionally behind basic auth, and able to fail on demand.
type staticRepo struct {
	URL string
	srv *httptest.Server

	mu      sync.Mutex
	files   map[string][]byte
	entries []string
	down    bool
	user    string
	pass    string
	// before, if set, is called with each request's path before it is
	// answered (a test holds a request there).
	before func(path string)
}

func newStaticRepo(t *testing.T) *staticRepo {
	t.Helper()
	r := &staticRepo{files: map[string][]byte{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	r.URL = r.srv.URL
	r.writeIndex()
	return r
}

func (r *staticRepo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	before := r.before
	r.mu.Unlock()
	if before != nil {
		before(req.URL.Path)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		http.Error(w, "upstream maintenance", http.StatusServiceUnavailable)
		return
	}
	if r.user != "" {
		if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	b, ok := r.files[strings.TrimPrefix(req.URL.Path, "/")]
	if !ok {
		http.NotFound(w, req)
		return
	}
	_, _ = w.Write(b)
}

// add publishes a chart version created at created.
func (r *staticRepo) add(t *testing.T, name, version string, created time.Time) []byte {
	t.Helper()
	b := testkit.MakeChart(t, testkit.Chart{Name: name, Version: version})
	sum := sha256.Sum256(b)
	file := fmt.Sprintf("charts/%s-%s.tgz", name, version)
	r.mu.Lock()
	r.files[file] = b
	r.entries = append(r.entries, fmt.Sprintf("  %s:\n  - apiVersion: v2\n    name: %s\n    version: %s\n    created: %q\n    digest: %s\n    urls:\n    - %s\n",
		name, name, version, created.Format(time.RFC3339Nano), hex.EncodeToString(sum[:]), file))
	r.mu.Unlock()
	r.writeIndex()
	return b
}

func (r *staticRepo) writeIndex() {
	r.mu.Lock()
	defer r.mu.Unlock()
	// One entries key per version is not valid YAML for two versions of
	// a chart; group them.
	byName := map[string][]string{}
	var names []string
	for _, e := range r.entries {
		head, rest, _ := strings.Cut(e, "\n")
		if _, ok := byName[head]; !ok {
			names = append(names, head)
		}
		byName[head] = append(byName[head], rest)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	if len(names) == 0 {
		b.Reset()
		b.WriteString("apiVersion: v1\nentries: {}\n")
	}
	for _, n := range names {
		b.WriteString(n + "\n" + strings.Join(byName[n], ""))
	}
	b.WriteString("generated: \"2026-01-01T00:00:00Z\"\n")
	r.files["index.yaml"] = []byte(b.String())
}

func (r *staticRepo) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}
