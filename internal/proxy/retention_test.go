package proxy_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/proxy"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// setupClocked is setup with one clock for the server and the cache, so
// a test can let days pass for retention.
func setupClocked(t testing.TB, plainHTTP ...string) *env {
	t.Helper()
	clk := &clock{t: time.Now()}
	var c *proxy.Cache
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Config.PrivateUpstreams = allowAll
		s.Config.PlainHTTPUpstreams = plainHTTP
		s.Config.GlobalLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		s.Now = clk.Now
		c = proxy.New(s.App(), s.Secrets, proxy.Options{Allow: allowAll, Timeout: 5 * time.Second, Now: clk.Now})
		s.App().Proxies = c
	})
	return &env{Server: ts, Cache: c, Clock: clk}
}

// sweep runs a retention sweep and returns "name version" of what it
// evicted, sorted.
func (e *env) sweep(t *testing.T) []string {
	t.Helper()
	ev, err := e.App().SweepProxyCaches(context.Background())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	var out []string
	for _, v := range ev {
		out = append(out, v.Repository+" "+v.Name+" "+v.Version)
	}
	slices.Sort(out)
	return out
}

func (e *env) flush(t *testing.T) {
	t.Helper()
	if err := e.App().FlushDownloads(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestProxyRetention (decision 16): a cached version nobody pulled for
// the proxy's retention (default 30d) is evicted by the sweep and
// fetched again when next pulled; a pull over Helm or /v1 keeps a
// version, reading the index does not; a repository's own retention is
// shown by /v1 and applies to it; an eviction is audited as chart.evict,
// not a deletion; a sweep while another replica holds the lease does
// nothing; and nothing is evicted while the upstream is unreachable.
func TestProxyRetention(t *testing.T) {
	up := startUpstream(t)
	e := setupClocked(t, hostOf(t, up.front.URL))
	px := e.mustProxy(t, "px", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts"), TTL: str("1h")})
	if px.Proxy.Retention != "30d" {
		t.Fatalf("default retention: %q", px.Proxy.Retention)
	}
	short := e.mustProxy(t, "short", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts"), Retention: str("48h")})
	if short.Proxy.Retention != "2d" {
		t.Fatalf("retention 48h shows as %q", short.Proxy.Retention)
	}
	if v := e.view(t, "short"); v.Retention != "2d" {
		t.Fatalf("repo view retention: %q", v.Retention)
	}

	// Day 0: three versions cached in px, one in short.
	for _, p := range []string{"/helm/px/charts/web-1.0.0.tgz", "/helm/px/charts/web-1.1.0.tgz", "/helm/px/charts/db-2.0.0.tgz", "/helm/short/charts/web-1.0.0.tgz"} {
		if r := e.Do(t, "GET", p, "", nil); r.StatusCode != 200 {
			t.Fatalf("fill %s: %d %s", p, r.StatusCode, r.Body)
		}
	}
	e.flush(t)
	if got := e.sweep(t); len(got) != 0 {
		t.Fatalf("sweep on day 0 evicted %v", got)
	}

	// Day 3: short's version, pulled on day 0, is past its 2d.
	e.Clock.Add(3 * 24 * time.Hour)
	if got := e.sweep(t); !slices.Equal(got, []string{"short web 1.0.0"}) {
		t.Fatalf("sweep on day 3 evicted %v, want short's web 1.0.0", got)
	}

	// Day 20: web 1.0.0 pulled over Helm, web 1.1.0 over /v1; db's
	// index entry read (no pull).
	e.Clock.Add(17 * 24 * time.Hour)
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.0.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("helm pull: %d", r.StatusCode)
	}
	if r := e.Do(t, "GET", "/v1/repositories/px/charts/web/1.1.0/archive", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("/v1 download: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/px/index.yaml", "", nil); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("db-2.0.0.tgz")) {
		t.Fatalf("index: %d", r.StatusCode)
	}
	if r := e.Do(t, "GET", "/v1/repositories/px/charts/db/2.0.0", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("/v1 metadata of db: %d", r.StatusCode)
	}
	e.flush(t)

	// Day 31: db was last used on day 0.
	e.Clock.Add(11 * 24 * time.Hour)
	// Another replica sweeping: this one leaves it to that one.
	if ok, err := e.App().Store.AcquireLease(context.Background(), app.ProxyRetentionLease, "other-replica", time.Minute); err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	if got := e.sweep(t); len(got) != 0 {
		t.Fatalf("sweep without the lease evicted %v", got)
	}
	if err := e.App().Store.ReleaseLease(context.Background(), app.ProxyRetentionLease, "other-replica"); err != nil {
		t.Fatal(err)
	}
	if got := e.sweep(t); !slices.Equal(got, []string{"px db 2.0.0"}) {
		t.Fatalf("sweep on day 31 evicted %v, want px's db 2.0.0", got)
	}
	r := e.Do(t, "GET", "/v1/repositories/px/charts", e.AdminKey, nil)
	if r.StatusCode != 200 || bytes.Contains(r.Body, []byte(`"name":"db"`)) || !bytes.Contains(r.Body, []byte(`"version":"1.1.0"`)) {
		t.Fatalf("/v1 charts after the sweep: %d %s", r.StatusCode, r.Body)
	}
	// Still listed by the index (the upstream has it), and fetched again
	// on demand.
	if r := e.Do(t, "GET", "/helm/px/index.yaml", "", nil); !bytes.Contains(r.Body, []byte("db-2.0.0.tgz")) {
		t.Fatalf("index after eviction lacks db: %s", r.Body)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/db-2.0.0.tgz", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, up.archives["db-2.0.0.tgz"]) {
		t.Fatalf("pull after eviction: %d", r.StatusCode)
	}
	if got := up.count("/helm/charts/charts/db-2.0.0.tgz"); got != 2 {
		t.Errorf("upstream archive requests for db: %d, want 2 (the fill and the refill)", got)
	}
	// Audited as an eviction by the proxy, not as a deletion.
	r = e.Do(t, "GET", "/v1/audit?action=chart.evict", e.AdminKey, nil)
	if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("px/db/2.0.0")) || !bytes.Contains(r.Body, []byte(`"proxy"`)) {
		t.Errorf("audit chart.evict: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/v1/audit?action=chart.delete", e.AdminKey, nil); bytes.Contains(r.Body, []byte("db/2.0.0")) {
		t.Errorf("the eviction was audited as a deletion: %s", r.Body)
	}

	// The refill restarted db's clock: a sweep a day later keeps it.
	e.Clock.Add(24 * time.Hour)
	e.flush(t)
	if got := e.sweep(t); len(got) != 0 {
		t.Fatalf("sweep a day after the refill evicted %v", got)
	}

	// The upstream gone: past every version's retention, nothing is
	// evicted, since the cache is all the proxy can serve.
	up.front.Close()
	e.Clock.Add(60 * 24 * time.Hour)
	if r := e.Do(t, "GET", "/helm/px/index.yaml", "", nil); r.Header.Get("Warning") == "" {
		t.Fatalf("index with the upstream down is not stale: %d", r.StatusCode)
	}
	if got := e.sweep(t); len(got) != 0 {
		t.Fatalf("sweep with the upstream unreachable evicted %v", got)
	}
	if r := e.Do(t, "GET", "/helm/px/charts/web-1.1.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("cached pull with the upstream down: %d", r.StatusCode)
	}
}

// TestProxyRetentionSetting: proxy.retention is validated (1h to
// 3650d), and a proxy takes no quota (decision 12): a repository quota
// on it is refused naming retention, and its fills count toward no
// organization's quota.
func TestProxyRetentionSetting(t *testing.T) {
	up := startUpstream(t)
	e := setupClocked(t, hostOf(t, up.front.URL))
	for _, v := range []string{"30m", "4000d", "soon"} {
		r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, client.CreateRepositoryRequest{Name: "bad", Proxy: &client.ProxyRequest{URL: str(up.front.URL + "/helm/charts"), Retention: str(v)}})
		var body struct {
			Error struct{ Code, Message, Parameter string }
		}
		r.JSON(t, &body)
		if r.StatusCode != 400 || body.Error.Parameter != "proxy.retention" {
			t.Errorf("retention %q: %d %s", v, r.StatusCode, r.Body)
		}
	}

	if r := e.DoJSON(t, "POST", "/v1/organizations", e.AdminKey, client.CreateOrganizationRequest{Name: "acme"}); r.StatusCode != 200 {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, client.CreateRepositoryRequest{Name: "acme-cache", Organization: "acme", Visibility: "public",
		Proxy: &client.ProxyRequest{URL: str(up.front.URL + "/helm/charts")}})
	if r.StatusCode != 200 {
		t.Fatalf("create proxy: %d %s", r.StatusCode, r.Body)
	}
	one := map[string]int64{"max_versions": 1}
	r = e.DoJSON(t, "PUT", "/v1/repositories/acme-cache/quota", e.AdminKey, one)
	if r.StatusCode != 400 || !strings.Contains(string(r.Body), "retention") {
		t.Errorf("quota on a proxy: %d %s", r.StatusCode, r.Body)
	}
	if r := e.DoJSON(t, "PUT", "/v1/organizations/acme/quota", e.AdminKey, one); r.StatusCode != 200 {
		t.Fatalf("org quota: %d %s", r.StatusCode, r.Body)
	}
	for _, p := range []string{"/helm/acme-cache/charts/web-1.0.0.tgz", "/helm/acme-cache/charts/db-2.0.0.tgz"} {
		if r := e.Do(t, "GET", p, "", nil); r.StatusCode != 200 {
			t.Fatalf("fill %s under an org quota of one version: %d %s", p, r.StatusCode, r.Body)
		}
	}
	var q struct{ Data client.Quota }
	r = e.Do(t, "GET", "/v1/organizations/acme/quota", e.AdminKey, nil)
	r.JSON(t, &q)
	if q.Data.UsedVersions != 0 || q.Data.UsedBytes != 0 {
		t.Errorf("org usage counts the proxy's cache: %s", r.Body)
	}
}
