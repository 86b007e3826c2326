package proxy_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/proxy"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// TestMain holds this package's API traffic to the OpenAPI document, as
// the server's own suite is.
func TestMain(m *testing.M) {
	if err := testkit.ValidateOpenAPI(server.OpenAPIDocument()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// upstream is a real chartctl server with a public repository "charts",
// behind a front that counts the requests it passes on (and can be
// stopped, as an upstream goes down).
type upstream struct {
	*testkit.Server
	front *httptest.Server
	// archives are the charts pushed, by file name.
	archives map[string][]byte

	mu       sync.Mutex
	requests map[string]int
	statuses map[int]int
}

func startUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{Server: testkit.StartServer(t), archives: map[string][]byte{}, requests: map[string]int{}, statuses: map[int]int{}}
	u.MustYAMLRepo(t, "charts", "public")
	for _, c := range []testkit.Chart{{Name: "web", Version: "1.0.0"}, {Name: "web", Version: "1.1.0"}, {Name: "db", Version: "2.0.0"}} {
		a := testkit.MakeChart(t, c)
		if r := u.Upload(t, "charts", u.AdminKey, a, ""); r.StatusCode != 200 {
			t.Fatalf("push %s: %d %s", c.Name, r.StatusCode, r.Body)
		}
		u.archives[c.Name+"-"+c.Version+".tgz"] = a
	}
	target, _ := url.Parse(u.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		u.mu.Lock()
		u.statuses[resp.StatusCode]++
		u.mu.Unlock()
		return nil
	}
	u.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.requests[r.URL.Path]++
		u.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(u.front.Close)
	return u
}

// count returns how many requests for path the upstream saw.
func (u *upstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[path]
}

func (u *upstream) status(code int) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.statuses[code]
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a chartctl server with its proxy cache wired as `chartctl
// serve` wires it, and a clock for the cache's ttl.
type env struct {
	*testkit.Server
	Cache *proxy.Cache
	Clock *clock
}

func setup(t testing.TB, allow netguard.Allowance, plainHTTP ...string) *env {
	t.Helper()
	clk := &clock{t: time.Now()}
	var c *proxy.Cache
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Config.PrivateUpstreams = allow
		s.Config.PlainHTTPUpstreams = plainHTTP
		s.Config.GlobalLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		c = proxy.New(s.App(), s.Secrets, proxy.Options{Allow: allow, Timeout: 5 * time.Second, Now: clk.Now})
		s.App().Proxies = c
	})
	return &env{Server: ts, Cache: c, Clock: clk}
}

// mustProxy creates the public proxy repository name of upstream URL.
func (e *env) mustProxy(t testing.TB, name string, p client.ProxyRequest) client.Repository {
	t.Helper()
	r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, client.CreateRepositoryRequest{Name: name, Visibility: "public", Proxy: &p})
	if r.StatusCode != 200 {
		t.Fatalf("create proxy %s: %d %s", name, r.StatusCode, r.Body)
	}
	var out struct{ Data client.Repository }
	r.JSON(t, &out)
	return out.Data
}

func (e *env) view(t *testing.T, name string) *client.RepositoryProxy {
	t.Helper()
	r := e.Do(t, "GET", "/v1/repositories/"+name, e.AdminKey, nil)
	var out struct{ Data client.Repository }
	r.JSON(t, &out)
	if out.Data.Proxy == nil {
		t.Fatalf("%s is no proxy: %s", name, r.Body)
	}
	return out.Data.Proxy
}

func str(s string) *string { return &s }

func hostOf(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

var allowAll = netguard.Allowance{All: true}

// TestProxyHelmPullThrough: the index comes from the upstream with its
// URLs rewritten here; 20 concurrent pulls of a chart never fetched
// make one index and one archive request upstream, get the upstream's
// bytes, and leave the version stored (listed by /v1); repo view counts
// hits and misses.
func TestProxyHelmPullThrough(t *testing.T) {
	up := startUpstream(t)
	e := setup(t, allowAll, hostOf(t, up.front.URL))
	repo := e.mustProxy(t, "bitnami", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts"), TTL: str("1h")})
	if repo.Proxy == nil || repo.Proxy.URL != up.front.URL+"/helm/charts" || repo.Proxy.TTL != "1h" {
		t.Fatalf("created %+v", repo.Proxy)
	}

	const n = 20
	var wg sync.WaitGroup
	bodies := make([][]byte, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// What helm pull does: the index, then the archive it names.
			idx := e.Do(t, "GET", "/helm/bitnami/index.yaml", "", nil)
			if idx.StatusCode != 200 || !bytes.Contains(idx.Body, []byte("charts/web-1.0.0.tgz")) || bytes.Contains(idx.Body, []byte(up.front.URL)) {
				t.Errorf("index: %d %s", idx.StatusCode, idx.Body)
				return
			}
			r := e.Do(t, "GET", "/helm/bitnami/charts/web-1.0.0.tgz", "", nil)
			bodies[i], codes[i] = r.Body, r.StatusCode
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || !bytes.Equal(bodies[i], up.archives["web-1.0.0.tgz"]) {
			t.Fatalf("pull %d: %d (%d bytes)", i, codes[i], len(bodies[i]))
		}
	}
	if got := up.count("/helm/charts/index.yaml"); got != 1 {
		t.Errorf("upstream saw %d index requests for %d pulls, want 1", got, n)
	}
	if got := up.count("/helm/charts/charts/web-1.0.0.tgz"); got != 1 {
		t.Errorf("upstream saw %d archive requests for %d pulls, want 1", got, n)
	}
	// Stored: /v1 lists it.
	r := e.Do(t, "GET", "/v1/repositories/bitnami/charts?name=web", e.AdminKey, nil)
	if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"version":"1.0.0"`)) || bytes.Contains(r.Body, []byte(`"version":"1.1.0"`)) {
		t.Fatalf("/v1 charts: %d %s", r.StatusCode, r.Body)
	}
	v := e.view(t, "bitnami")
	if v.Misses < 1 || v.Hits+v.Misses < n || v.UpstreamStatus != client.ProxyUpstreamOK {
		t.Errorf("repo view: %+v", v)
	}

	// Pushes are refused: the repository is read-only.
	r = e.Upload(t, "bitnami", e.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "own", Version: "1.0.0"}), "")
	if r.StatusCode != 403 || !strings.Contains(string(r.Body), "read-only proxy") {
		t.Errorf("push to proxy: %d %s", r.StatusCode, r.Body)
	}
	// An unknown version is 404, without a second index request (the
	// index is fresh).
	if r := e.Do(t, "GET", "/helm/bitnami/charts/web-9.9.9.tgz", "", nil); r.StatusCode != 404 {
		t.Errorf("unknown version: %d %s", r.StatusCode, r.Body)
	}
	if got := up.count("/helm/charts/index.yaml"); got != 1 {
		t.Errorf("index requests after a 404: %d", got)
	}
}

// TestProxyRevalidateAndStale: after ttl the index is revalidated with
// one conditional request (the upstream answers 304); with the upstream
// stopped the cached index is served with the Warning header, a cached
// chart still pulls, and an uncached one is 502 upstream_unavailable
// naming the upstream's host, remembered for the negative cache's time.
func TestProxyRevalidateAndStale(t *testing.T) {
	up := startUpstream(t)
	e := setup(t, allowAll, hostOf(t, up.front.URL))
	e.mustProxy(t, "px", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts"), TTL: str("10m")})
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.1.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("first pull: %d %s", r.StatusCode, r.Body)
	}
	e.Clock.Add(11 * time.Minute)
	if r := e.Do(t, "GET", "/helm/px/index.yaml", "", nil); r.StatusCode != 200 || r.Header.Get("Warning") != "" {
		t.Fatalf("revalidated index: %d %q", r.StatusCode, r.Header.Get("Warning"))
	}
	if got, n304 := up.count("/helm/charts/index.yaml"), up.status(304); got != 2 || n304 != 1 {
		t.Errorf("revalidation: %d index requests, %d answered 304; want 2 and 1", got, n304)
	}

	up.front.Close()
	e.Clock.Add(11 * time.Minute)
	r := e.Do(t, "GET", "/helm/px/index.yaml", "", nil)
	if r.StatusCode != 200 || r.Header.Get("Warning") != `110 - "Response is Stale"` || !bytes.Contains(r.Body, []byte("db")) {
		t.Fatalf("stale index: %d %q %s", r.StatusCode, r.Header.Get("Warning"), r.Body)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.1.0.tgz", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, up.archives["web-1.1.0.tgz"]) {
		t.Fatalf("cached pull with the upstream down: %d", r.StatusCode)
	}
	host := hostOf(t, up.front.URL)
	for range 2 { // the second from the negative cache
		r = e.Do(t, "GET", "/helm/px/charts/db-2.0.0.tgz", "", nil)
		if r.StatusCode != 502 || r.ErrorCode() != "upstream_unavailable" || !strings.Contains(string(r.Body), host) {
			t.Fatalf("uncached pull with the upstream down: %d %s", r.StatusCode, r.Body)
		}
	}
	if v := e.view(t, "px"); v.UpstreamStatus != client.ProxyUpstreamUnreachable || v.UpstreamError == "" {
		t.Errorf("repo view with the upstream down: %+v", v)
	}
}

// TestProxyFiltersAndPurge: include/exclude globs hide charts from the
// index and from pulls; a purge deletes what is cached, and the next
// pull fetches it again.
func TestProxyFiltersAndPurge(t *testing.T) {
	up := startUpstream(t)
	e := setup(t, allowAll, hostOf(t, up.front.URL))
	e.mustProxy(t, "only-web", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts/"), Include: &[]string{"w*"}, Exclude: &[]string{"db"}})
	r := e.Do(t, "GET", "/helm/only-web/index.yaml", "", nil)
	if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("web-1.0.0.tgz")) || bytes.Contains(r.Body, []byte("db-2.0.0")) {
		t.Fatalf("filtered index: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/only-web/charts/db-2.0.0.tgz", "", nil); r.StatusCode != 404 {
		t.Errorf("excluded chart: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/only-web/charts/web-1.0.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("pull: %d %s", r.StatusCode, r.Body)
	}
	r = e.Do(t, "DELETE", "/v1/repositories/only-web/cache?chart=web&version=1.0.0", e.AdminKey, nil)
	var purged struct{ Data client.PurgeCacheResult }
	r.JSON(t, &purged)
	if r.StatusCode != 200 || len(purged.Data.Purged) != 1 || purged.Data.Purged[0].Version != "1.0.0" {
		t.Fatalf("purge: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/only-web/charts/web-1.0.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("pull after purge: %d %s", r.StatusCode, r.Body)
	}
	if got := up.count("/helm/charts/charts/web-1.0.0.tgz"); got != 2 {
		t.Errorf("archive requests after a purge: %d, want 2", got)
	}
	// Purging an ordinary repository, or a version not cached, is refused.
	e.MustRepo(t, "plain", "")
	if r := e.Do(t, "DELETE", "/v1/repositories/plain/cache", e.AdminKey, nil); r.StatusCode != 400 || !strings.Contains(string(r.Body), "not a proxy") {
		t.Errorf("purge of a plain repository: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "DELETE", "/v1/repositories/only-web/cache?chart=web&version=7.0.0", e.AdminKey, nil); r.StatusCode != 404 {
		t.Errorf("purge of an uncached version: %d %s", r.StatusCode, r.Body)
	}
}

// TestProxySettingsRefused: bad proxy settings are 400s naming the
// field: plain http to a host the operator did not list, a private
// address without --allow-private-upstreams, a ttl under 1s, a proxy
// that is also a mirror.
func TestProxySettingsRefused(t *testing.T) {
	e := setup(t, netguard.Allowance{})
	for _, tc := range []struct {
		body  client.CreateRepositoryRequest
		param string
		says  string
	}{
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("http://charts.example.com/x")}}, "proxy.url", "--plain-http-upstreams"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("https://127.0.0.1/x")}}, "proxy.url", "--allow-private-upstreams"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("https://10.1.2.3/x")}}, "proxy.url", "--allow-private-upstreams"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("ftp://charts.example.com/")}}, "proxy.url", "https"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("oci://ghcr.io/Acme/Charts")}}, "proxy.url", "lowercase PATH"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("https://charts.example.com/"), TTL: str("500ms")}}, "proxy.ttl", "at least 1s"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("https://charts.example.com/"), Include: &[]string{"a/b"}}}, "proxy.include", "glob"},
		{client.CreateRepositoryRequest{Name: "a", Proxy: &client.ProxyRequest{URL: str("https://charts.example.com/")}, Mirror: &client.MirrorRequest{URL: str("https://charts.example.com/")}}, "proxy", "not both"},
	} {
		r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, tc.body)
		var body struct {
			Error struct{ Code, Message, Parameter string }
		}
		r.JSON(t, &body)
		if r.StatusCode != 400 || body.Error.Parameter != tc.param || !strings.Contains(body.Error.Message, tc.says) {
			t.Errorf("%+v: %d %s", tc.body.Proxy, r.StatusCode, r.Body)
		}
	}
}

// TestProxySSRF: an upstream name that resolves to a loopback address,
// or an allowed upstream that redirects to a private address outside the
// operator's CIDR list, is refused when connecting: 502 naming the
// upstream and the flag that would allow it.
func TestProxySSRF(t *testing.T) {
	// The target: something on 127.0.0.2, which the list leaves out.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	inner := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the guarded target was reached: %s", r.URL)
	})}}
	inner.Start()
	defer inner.Close()
	redirector := httptest.NewServer(http.RedirectHandler(inner.URL+"/index.yaml", http.StatusFound))
	defer redirector.Close()

	e := setup(t, netguard.Allowance{Ranges: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, hostOf(t, redirector.URL), "localhost:"+strings.Split(hostOf(t, inner.URL), ":")[1])
	e.mustProxy(t, "redir", client.ProxyRequest{URL: str(redirector.URL)})
	r := e.Do(t, "GET", "/helm/redir/index.yaml", "", nil)
	if r.StatusCode != 502 || r.ErrorCode() != "upstream_unavailable" || !strings.Contains(string(r.Body), "--allow-private-upstreams") {
		t.Errorf("redirect to a private address: %d %s", r.StatusCode, r.Body)
	}
	// A name (not a literal address) that resolves to loopback passes
	// the check at creation and is refused when connecting.
	e2 := setup(t, netguard.Allowance{}, "localhost:"+strings.Split(hostOf(t, inner.URL), ":")[1])
	e2.mustProxy(t, "byname", client.ProxyRequest{URL: str("http://localhost:" + strings.Split(hostOf(t, inner.URL), ":")[1])})
	r = e2.Do(t, "GET", "/helm/byname/index.yaml", "", nil)
	if r.StatusCode != 502 || !strings.Contains(string(r.Body), "private or loopback") {
		t.Errorf("name resolving to loopback: %d %s", r.StatusCode, r.Body)
	}
}
