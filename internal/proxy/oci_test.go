package proxy_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/proxy"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/disttest"
	"github.com/chartctl/chartctl/server"
)

// setupOCI is setup with the OCI registry mounted on /v2, as `chartctl
// serve` mounts it.
func setupOCI(t testing.TB, allow netguard.Allowance, plainHTTP ...string) *env {
	t.Helper()
	clk := &clock{t: time.Now()}
	var c *proxy.Cache
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Config.PrivateUpstreams = allow
		s.Config.PlainHTTPUpstreams = plainHTTP
		s.Config.GlobalLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.SessionKey = []byte("oci proxy test: upload session key")
			reg.Register(e)
		}
		c = proxy.New(s.App(), s.Secrets, proxy.Options{Allow: allow, Timeout: 5 * time.Second, Now: clk.Now})
		s.App().Proxies = c
	})
	return &env{Server: ts, Cache: c, Clock: clk}
}

// counter is a reverse proxy in front of an upstream registry that counts
// the requests it passes on by method and path.
type counter struct {
	*httptest.Server
	mu sync.Mutex
	n  map[string]int
}

func newCounter(t testing.TB, target string) *counter {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	c := &counter{n: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// count returns the requests seen for method and path.
func (c *counter) count(method, path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method+" "+path]
}

// all returns a copy of the counts.
func (c *counter) all() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// reset forgets what was counted.
func (c *counter) reset() {
	c.mu.Lock()
	c.n = map[string]int{}
	c.mu.Unlock()
}

func (c *counter) host() string { return strings.TrimPrefix(c.URL, "http://") }

// helmPush pushes a chart made for name version to oci://host/charts with
// the real helm (logged in first when user is set), and returns its
// archive.
func helmPush(t *testing.T, h *testkit.Helm, host, user, password, name, version, desc string) []byte {
	t.Helper()
	a := testkit.MakeChart(t, testkit.Chart{Name: name, Version: version, Description: desc})
	p := h.Write(name+"-"+version+".tgz", a)
	args := []string{"push", p, "oci://" + host + "/charts", "--plain-http"}
	if user != "" {
		args = append(args, "--username", user, "--password", password)
	}
	h.Must(args...)
	return a
}

// anyHelm returns one real helm client (helm 4 when there is one).
func anyHelm(t *testing.T) *testkit.Helm {
	hs := testkit.Helms(t)
	for _, n := range []string{"helm4", "helm3", "helm"} {
		if h := hs[n]; h != nil {
			return h.With(t)
		}
	}
	t.Fatal("no helm")
	return nil
}

func pulled(t *testing.T, dir, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProxyOCIDistribution: a proxy of a real Distribution registry (the
// charts pushed there by the real helm). `helm pull oci://` of a chart
// never fetched works through chartctl and gets the upstream's bytes and
// manifest digest; the version is then in index.yaml, /v1 and pullable
// over the Helm protocol; 20 concurrent pulls of another make one
// upstream manifest GET; within ttl a pull asks the upstream nothing,
// after ttl exactly one HEAD; a tag the upstream moved is fetched again;
// with the upstream stopped the cached chart pulls with the Warning
// header (the failure remembered for the negative cache's time) and an
// uncached one is 502 naming the upstream.
func TestProxyOCIDistribution(t *testing.T) {
	dist := disttest.Start(t, disttest.Options{})
	front := newCounter(t, dist.URL)
	h := anyHelm(t)
	web1 := helmPush(t, h, dist.Host, "", "", "web", "1.0.0", "one")
	web2 := helmPush(t, h, dist.Host, "", "", "web", "1.1.0", "two")
	helmPush(t, h, dist.Host, "", "", "db", "2.0.0", "db")

	e := setupOCI(t, allowAll, front.host())
	repo := e.mustProxy(t, "ghcr-proxy", client.ProxyRequest{URL: str("oci://" + front.host() + "/charts"), TTL: str("1h")})
	if repo.Proxy == nil || repo.Proxy.URL != "oci://"+front.host()+"/charts" {
		t.Fatalf("created: %+v", repo.Proxy)
	}
	host := strings.TrimPrefix(e.URL, "http://")

	// A chart never fetched, pulled with the real helm.
	dest := t.TempDir()
	out := h.Must("pull", "oci://"+host+"/ghcr-proxy/web", "--version", "1.0.0", "--plain-http", "--destination", dest)
	if got := pulled(t, dest, "web-1.0.0.tgz"); !bytes.Equal(got, web1) {
		t.Fatalf("pulled %d bytes, want the upstream's %d", len(got), len(web1))
	}
	// The upstream's manifest, digest and all.
	hreq, _ := http.NewRequest(http.MethodHead, dist.URL+"/v2/charts/web/manifests/1.0.0", nil)
	hreq.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	up, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	up.Body.Close()
	if d := up.Header.Get("Docker-Content-Digest"); d == "" || !strings.Contains(out, d) {
		t.Errorf("helm pull printed %q, want the upstream's digest %s", out, d)
	}
	// Now a chart version of the proxy: in index.yaml, /v1 and over the
	// Helm protocol.
	if r := e.Do(t, "GET", "/helm/ghcr-proxy/index.yaml", "", nil); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("1.0.0")) || bytes.Contains(r.Body, []byte("1.1.0")) {
		t.Fatalf("index.yaml: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/v1/repositories/ghcr-proxy/charts?name=web", e.AdminKey, nil); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"version":"1.0.0"`)) {
		t.Fatalf("/v1: %d %s", r.StatusCode, r.Body)
	}
	hdest := t.TempDir()
	h.Must("pull", e.URL+"/helm/ghcr-proxy/charts/web-1.0.0.tgz", "--destination", hdest)
	if got := pulled(t, hdest, "web-1.0.0.tgz"); !bytes.Equal(got, web1) {
		t.Fatalf("helm pull over the Helm protocol: %d bytes", len(got))
	}
	// A Helm request for a version never fetched fills it over OCI by
	// its tag.
	if r := e.Do(t, "GET", "/helm/ghcr-proxy/charts/db-2.0.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("Helm download of a version never fetched: %d %s", r.StatusCode, r.Body)
	}

	// 20 concurrent pulls of a version never fetched: one manifest GET.
	front.reset()
	const n = 20
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(e.URL + "/v2/ghcr-proxy/web/manifests/1.1.0")
			if err == nil {
				codes[i] = resp.StatusCode
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("concurrent pull %d: %d", i, c)
		}
	}
	if got := front.count("GET", "/v2/charts/web/manifests/1.1.0"); got != 1 {
		t.Errorf("upstream saw %d manifest GETs for %d pulls, want 1", got, n)
	}
	d2 := t.TempDir()
	h.Must("pull", "oci://"+host+"/ghcr-proxy/web", "--version", "1.1.0", "--plain-http", "--destination", d2)
	if got := pulled(t, d2, "web-1.1.0.tgz"); !bytes.Equal(got, web2) {
		t.Fatalf("web 1.1.0: %d bytes", len(got))
	}

	// Within ttl: nothing upstream. After ttl: exactly one HEAD.
	front.reset()
	h.Must("pull", "oci://"+host+"/ghcr-proxy/web", "--version", "1.0.0", "--plain-http", "--destination", t.TempDir())
	if seen := front.all(); len(seen) != 0 {
		t.Errorf("a pull within ttl asked the upstream: %v", seen)
	}
	e.Clock.Add(2 * time.Hour)
	h.Must("pull", "oci://"+host+"/ghcr-proxy/web", "--version", "1.0.0", "--plain-http", "--destination", t.TempDir())
	if seen := front.all(); seen["HEAD /v2/charts/web/manifests/1.0.0"] != 1 || len(seen) != 1 {
		t.Errorf("a pull after ttl asked the upstream %v, want one HEAD and nothing else", seen)
	}

	// The upstream's tag moves to other content: after ttl it is
	// fetched again.
	web1b := helmPush(t, h, dist.Host, "", "", "web", "1.0.0", "one, rebuilt")
	e.Clock.Add(2 * time.Hour)
	d3 := t.TempDir()
	h.Must("pull", "oci://"+host+"/ghcr-proxy/web", "--version", "1.0.0", "--plain-http", "--destination", d3)
	if got := pulled(t, d3, "web-1.0.0.tgz"); !bytes.Equal(got, web1b) {
		t.Fatalf("after the upstream's tag moved: %d bytes, want the new %d", len(got), len(web1b))
	}

	// The upstream stops: cached pulls work and say they are stale;
	// uncached ones are 502 naming the upstream.
	dist.Stop()
	e.Clock.Add(2 * time.Hour)
	h.Must("pull", "oci://"+host+"/ghcr-proxy/web", "--version", "1.1.0", "--plain-http", "--destination", t.TempDir())
	e.Clock.Add(2 * time.Hour)
	r := e.Do(t, "GET", "/v2/ghcr-proxy/web/manifests/1.1.0", "", nil)
	if r.StatusCode != 200 || r.Header.Get("Warning") != `110 - "Response is Stale"` {
		t.Errorf("cached manifest with the upstream down: %d %q", r.StatusCode, r.Header.Get("Warning"))
	}
	// Remembered (negative cache): the next pull does not ask again.
	front.reset()
	r = e.Do(t, "GET", "/v2/ghcr-proxy/web/manifests/1.1.0", "", nil)
	if seen := front.all(); r.StatusCode != 200 || r.Header.Get("Warning") == "" || len(seen) != 0 {
		t.Errorf("cached manifest again with the upstream down: %d %q, upstream asked %v", r.StatusCode, r.Header.Get("Warning"), seen)
	}
	r = e.Do(t, "GET", "/v2/ghcr-proxy/web/manifests/9.9.9", "", nil)
	if r.StatusCode != 502 || !bytes.Contains(r.Body, []byte(front.host())) {
		t.Errorf("uncached with the upstream down: %d %s", r.StatusCode, r.Body)
	}
	if out, err := h.Run("pull", "oci://"+host+"/ghcr-proxy/db", "--version", "3.0.0", "--plain-http", "--destination", t.TempDir()); err == nil {
		t.Errorf("helm pull of an uncached chart with the upstream down: %s", out)
	}
	v := e.view(t, "ghcr-proxy")
	if v.UpstreamStatus != client.ProxyUpstreamUnreachable || v.Hits == 0 || v.Misses == 0 {
		t.Errorf("repo view: %+v", v)
	}
}

// TestProxyOCIBasicAuth: a Distribution registry behind htpasswd Basic
// auth as the upstream, with the proxy's stored credential; a wrong one
// is a 502 saying the upstream refused it; the chart filters apply.
func TestProxyOCIBasicAuth(t *testing.T) {
	dist := disttest.Start(t, disttest.Options{Username: "puller", Password: "s3cret"})
	h := anyHelm(t)
	a := helmPush(t, h, dist.Host, "puller", "s3cret", "ingress", "4.0.0", "")
	helmPush(t, h, dist.Host, "puller", "s3cret", "secret-tool", "1.0.0", "")

	e := setupOCI(t, allowAll, dist.Host)
	e.mustProxy(t, "hub", client.ProxyRequest{URL: str("oci://" + dist.Host + "/charts"), Username: str("puller"), Password: str("s3cret"), Exclude: &[]string{"secret-*"}})
	e.mustProxy(t, "wrong", client.ProxyRequest{URL: str("oci://" + dist.Host + "/charts"), Username: str("puller"), Password: str("nope")})
	host := strings.TrimPrefix(e.URL, "http://")
	dest := t.TempDir()
	h.Must("pull", "oci://"+host+"/hub/ingress", "--version", "4.0.0", "--plain-http", "--destination", dest)
	if got := pulled(t, dest, "ingress-4.0.0.tgz"); !bytes.Equal(got, a) {
		t.Fatalf("pulled %d bytes, want %d", len(got), len(a))
	}
	if r := e.Do(t, "GET", "/v2/hub/secret-tool/manifests/1.0.0", "", nil); r.StatusCode != 404 {
		t.Errorf("excluded chart: %d %s", r.StatusCode, r.Body)
	}
	r := e.Do(t, "GET", "/v2/wrong/ingress/manifests/4.0.0", "", nil)
	if r.StatusCode != 502 || !bytes.Contains(r.Body, []byte("credential")) {
		t.Errorf("wrong password: %d %s", r.StatusCode, r.Body)
	}
}

// TestProxyOCIPlainHTTPAndPrivate: an oci:// upstream at a loopback
// address is refused without the operator's allowance, and reached over
// plain http only when listed in --plain-http-upstreams.
func TestProxyOCIPlainHTTPAndPrivate(t *testing.T) {
	dist := disttest.Start(t, disttest.Options{})
	h := anyHelm(t)
	helmPush(t, h, dist.Host, "", "", "web", "1.0.0", "")

	// Not allowed to reach private addresses.
	e := setupOCI(t, netguard.Allowance{}, dist.Host)
	r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, client.CreateRepositoryRequest{Name: "px", Visibility: "public", Proxy: &client.ProxyRequest{URL: str("oci://" + dist.Host + "/charts")}})
	if r.StatusCode != 400 || !bytes.Contains(r.Body, []byte("--allow-private-upstreams")) {
		t.Fatalf("private upstream: %d %s", r.StatusCode, r.Body)
	}
	// Allowed, but not listed for plain http: https is tried and fails.
	e = setupOCI(t, allowAll)
	e.mustProxy(t, "px", client.ProxyRequest{URL: str("oci://" + dist.Host + "/charts")})
	if r := e.Do(t, "GET", "/v2/px/web/manifests/1.0.0", "", nil); r.StatusCode != 502 {
		t.Errorf("plain http upstream not listed: %d %s", r.StatusCode, r.Body)
	}
}

// TestProxyHelmProvenance: a Helm upstream (a real chartctl) serving a
// chart signed with `helm package --sign` and its .prov: the proxy
// fetches the .prov with the archive and stores it, serves it at
// <archive>.prov, and the version's verification record shows the
// signature (verified once the repository trusts the key); a chart
// without one is stored without.
func TestProxyHelmProvenance(t *testing.T) {
	helm := testkit.HelmBinary(t)
	signer := testkit.MustGPGSigner(t, "Chart Signer <signer@example.com>")
	archive, prov := testkit.MustSignedChart(t, helm, "signed", "1.0.0", signer)
	up := startUpstream(t)
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": prov})
	if r := up.Do(t, "POST", "/v1/repositories/charts/charts", up.AdminKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode >= 300 {
		t.Fatalf("upload signed: %d %s", r.StatusCode, r.Body)
	}

	e := setup(t, allowAll, hostOf(t, up.front.URL))
	e.mustProxy(t, "px", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts")})
	pub, err := os.ReadFile(signer.Pubring)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.DoJSON(t, "POST", "/v1/repositories/px/trust", e.AdminKey, map[string]any{"name": "release", "kind": "pgp", "key_base64": pub}); r.StatusCode >= 300 {
		t.Fatalf("trust: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/signed-1.0.0.tgz", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, archive) {
		t.Fatalf("archive: %d", r.StatusCode)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/signed-1.0.0.tgz.prov", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, prov) {
		t.Fatalf("prov: %d %s", r.StatusCode, r.Body)
	}
	if got := up.count("/helm/charts/charts/signed-1.0.0.tgz.prov"); got != 1 {
		t.Errorf("upstream saw %d .prov requests, want 1", got)
	}
	r := e.Do(t, "GET", "/v1/repositories/px/charts/signed/1.0.0", e.AdminKey, nil)
	var out struct {
		Data client.Chart `json:"data"`
	}
	r.JSON(t, &out)
	v := out.Data.Verification
	if v == nil || v.Status != "verified" || len(v.Signatures) != 1 || v.Signatures[0].Kind != "pgp" || v.Signatures[0].Identity != signer.Name {
		t.Fatalf("verification of the proxied version: %s", r.Body)
	}

	// Unsigned upstream chart: stored without a .prov.
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.0.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("unsigned archive: %d", r.StatusCode)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.0.0.tgz.prov", "", nil); r.StatusCode != 404 {
		t.Errorf("prov of an unsigned chart: %d %s", r.StatusCode, r.Body)
	}
}

// TestProxyOCISignatures: a chart in a Distribution upstream signed with
// the real cosign (a key pair; an OCI 1.1 referrer): the proxy copies the
// signature with the chart, serves it through its referrers API under the
// upstream's manifest digest, and the version verifies against the proxy
// repository's trust.
func TestProxyOCISignatures(t *testing.T) {
	cosign := testkit.Tool(t, "CHARTCTL_COSIGN", "cosign")
	dist := disttest.Start(t, disttest.Options{})
	h := anyHelm(t)
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(cosign, args...)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "HOME="+home, "DOCKER_CONFIG="+filepath.Join(home, ".docker"), "COSIGN_PASSWORD=", "COSIGN_YES=true", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	helmPush(t, h, dist.Host, "", "", "web", "1.0.0", "")
	hreq, _ := http.NewRequest(http.MethodHead, dist.URL+"/v2/charts/web/manifests/1.0.0", nil)
	hreq.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	dg := resp.Header.Get("Docker-Content-Digest")
	run("generate-key-pair")
	run("sign", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false", "--allow-http-registry", "-y", dist.Host+"/charts/web@"+dg)

	e := setupOCI(t, allowAll, dist.Host)
	e.mustProxy(t, "signed", client.ProxyRequest{URL: str("oci://" + dist.Host + "/charts")})
	pub, err := os.ReadFile(filepath.Join(home, "cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if r := e.DoJSON(t, "POST", "/v1/repositories/signed/trust", e.AdminKey, map[string]string{"name": "cosign-ci", "kind": "cosign-key", "key": string(pub)}); r.StatusCode >= 300 {
		t.Fatalf("trust: %d %s", r.StatusCode, r.Body)
	}
	h.Must("pull", "oci://"+strings.TrimPrefix(e.URL, "http://")+"/signed/web", "--version", "1.0.0", "--plain-http", "--destination", t.TempDir())
	r := e.Do(t, "GET", "/v2/signed/web/referrers/"+dg, "", nil)
	if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("sigstore")) {
		t.Fatalf("referrers of the proxied chart: %d %s", r.StatusCode, r.Body)
	}
	r = e.Do(t, "GET", "/v1/repositories/signed/charts/web/1.0.0", e.AdminKey, nil)
	var out struct {
		Data client.Chart `json:"data"`
	}
	r.JSON(t, &out)
	v := out.Data.Verification
	if v == nil || v.Status != "verified" || len(v.Signatures) == 0 || v.Signatures[0].Kind != "cosign" || v.Signatures[0].Trust != "cosign-ci" {
		t.Fatalf("verification of the proxied version: %s", r.Body)
	}
}

// TestProxyOCITokenChallenge: another chartctl as the OCI upstream, its
// repository private: the proxy answers its Bearer token challenge (the
// flow GHCR and Docker Hub use) with the stored credential and fills the
// chart, byte-identical; without a credential the upstream's refusal is
// a 502 saying so.
func TestProxyOCITokenChallenge(t *testing.T) {
	up := setupOCI(t, allowAll)
	up.MustRepo(t, "charts", "private")
	a := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.3"})
	if r := up.Upload(t, "charts", up.AdminKey, a, ""); r.StatusCode != 200 {
		t.Fatalf("upload upstream: %d %s", r.StatusCode, r.Body)
	}
	upHost := strings.TrimPrefix(up.URL, "http://")
	// The upstream challenges with a Bearer realm, as GHCR does.
	if resp, err := http.Get(up.URL + "/v2/"); err != nil || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("upstream challenge: %v %v", err, resp)
	}

	e := setupOCI(t, allowAll, upHost)
	e.mustProxy(t, "px", client.ProxyRequest{URL: str("oci://" + upHost + "/charts"), Username: str("robot"), Password: str(up.AdminKey)})
	e.mustProxy(t, "anon", client.ProxyRequest{URL: str("oci://" + upHost + "/charts")})
	if r := e.Do(t, "GET", "/v2/px/web/manifests/1.2.3", "", nil); r.StatusCode != 200 {
		t.Fatalf("fill through the token flow: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.2.3.tgz", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, a) {
		t.Fatalf("archive: %d (%d bytes, want %d)", r.StatusCode, len(r.Body), len(a))
	}
	r := e.Do(t, "GET", "/v2/anon/web/manifests/1.2.3", "", nil)
	if r.StatusCode != 502 || !bytes.Contains(r.Body, []byte("credential")) || !bytes.Contains(r.Body, []byte(upHost)) {
		t.Errorf("anonymous proxy of a private upstream: %d %s", r.StatusCode, r.Body)
	}
}
