package server_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// heldClock is an injectable clock for the hold window.
type heldClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *heldClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *heldClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// heldVersion returns the /v1 record of one version as the caller tok
// sees it, with the status code.
func heldVersion(t *testing.T, ts *testkit.Server, tok, repo, name, version string) (client.Chart, int) {
	t.Helper()
	r := ts.Do(t, http.MethodGet, "/v1/repositories/"+repo+"/charts/"+name+"/"+version, tok, nil)
	var out struct {
		Data client.Chart `json:"data"`
	}
	if r.StatusCode == http.StatusOK {
		r.JSON(t, &out)
	}
	return out.Data, r.StatusCode
}

// TestHeldVersionInvisibleUntilSigned: under require_signature with a
// hold_window, an unsigned push (helm package --sign's archive without
// its .prov) is stored held: `helm search repo`, `helm pull`, index.yaml,
// /v1 search and lists, OCI tags and `helm pull oci://` (real helm) do not
// see it; its /v1 record and OCI manifest show only to those who may
// push, its archive and blobs to nobody. The same archive's .prov, pushed
// later, releases it (chart.held, then chart.released and chart.pushed,
// audited), and every client then finds it. A held version whose window
// closes on the injected clock is deleted by the sweep, audited, and no
// other version is touched.
func TestHeldVersionInvisibleUntilSigned(t *testing.T) {
	helmBin := testkit.HelmBinary(t)
	signer := testkit.MustGPGSigner(t, "Chart Signer <signer@example.com>")
	clock := &heldClock{now: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Now = clock.Now
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.SessionKey = []byte("held test: upload session key")
			reg.Register(e)
		}
	})
	ts.MustYAMLRepo(t, "prod", "public")
	ctx := context.Background()
	repo, err := ts.Store.Repository(ctx, "prod")
	if err != nil {
		t.Fatal(err)
	}
	hook := &chartctl.Webhook{Repository: "prod", RepositoryID: repo.ID, URL: "http://127.0.0.1:9/hook", Events: []string{"*"}, Active: true, CreatedBy: ts.Admin.ID}
	if err := ts.Store.CreateWebhook(ctx, hook); err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(signer.Pubring)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "release", Kind: "pgp", KeyBase64: base64.StdEncoding.EncodeToString(pub)}); r.StatusCode >= 300 {
		t.Fatalf("add trust: %d %s", r.StatusCode, r.Body)
	}
	if r := ts.DoJSON(t, http.MethodPut, "/v1/repositories/prod/policy", ts.AdminKey,
		map[string]any{"require_signature": "any", "hold_window": "10m"}); r.StatusCode != http.StatusOK {
		t.Fatalf("set policy: %d %s", r.StatusCode, r.Body)
	}
	a1, p1 := testkit.MustSignedChart(t, helmBin, "web", "1.0.0", signer)
	uploadSigned(t, ts, "prod", a1, p1)

	// The unsigned push is stored, held for the window.
	a2, p2 := testkit.MustSignedChart(t, helmBin, "web", "2.0.0", signer)
	r := ts.Upload(t, "prod", ts.AdminKey, a2, "")
	var up struct {
		Data client.ChartUpload `json:"data"`
	}
	if r.StatusCode != http.StatusOK {
		t.Fatalf("unsigned upload under a hold window: %d %s", r.StatusCode, r.Body)
	}
	r.JSON(t, &up)
	deadline := clock.Now().Add(10 * time.Minute)
	if !up.Data.Held || up.Data.HeldUntil == nil || !up.Data.HeldUntil.Equal(deadline) {
		t.Fatalf("upload answer: %+v, want held until %s", up.Data, deadline)
	}
	if cv, code := heldVersion(t, ts, ts.AdminKey, "prod", "web", "2.0.0"); code != http.StatusOK || !cv.Held || cv.HeldUntil == nil || !cv.HeldUntil.Equal(deadline) {
		t.Fatalf("the pusher's view of the held version: %d %+v", code, cv)
	}
	reader := ts.MustKey(t, ts.MustUser(t, "reader@example.com", false), chartctl.ScopeRepoRead)
	if _, code := heldVersion(t, ts, reader, "prod", "web", "2.0.0"); code != http.StatusNotFound {
		t.Fatalf("a reader sees the held version: %d", code)
	}
	if r := ts.Do(t, http.MethodGet, "/v1/repositories/prod/charts/web/2.0.0/archive", ts.AdminKey, nil); r.StatusCode != http.StatusNotFound || !strings.Contains(string(r.Body), "held until") {
		t.Fatalf("the pusher downloads the held archive: %d %s", r.StatusCode, r.Body)
	}

	h := testkit.NewHelm(t)
	u, _ := url.Parse(ts.URL)
	h.Must("repo", "add", "prod", ts.URL+"/helm/prod")
	invisible := func(when string) {
		t.Helper()
		if out := h.Must("search", "repo", "prod/web", "--versions"); !strings.Contains(out, "1.0.0") || strings.Contains(out, "2.0.0") {
			t.Fatalf("%s: helm search repo:\n%s", when, out)
		}
		if out, err := h.Run("pull", "prod/web", "--version", "2.0.0", "-d", t.TempDir()); err == nil {
			t.Fatalf("%s: helm pull of the held version succeeded:\n%s", when, out)
		}
		if out, err := h.Run("pull", "oci://"+u.Host+"/prod/web", "--version", "2.0.0", "--plain-http", "-d", t.TempDir()); err == nil {
			t.Fatalf("%s: helm pull oci:// of the held version succeeded:\n%s", when, out)
		}
		if r := ts.Do(t, http.MethodGet, "/helm/prod/index.yaml", "", nil); strings.Contains(string(r.Body), "2.0.0") {
			t.Fatalf("%s: index.yaml lists the held version:\n%s", when, r.Body)
		}
		if r := ts.Do(t, http.MethodGet, "/v2/prod/web/tags/list", "", nil); r.StatusCode != http.StatusOK || strings.Contains(string(r.Body), "2.0.0") {
			t.Fatalf("%s: tags/list: %d %s", when, r.StatusCode, r.Body)
		}
		if r := ts.Do(t, http.MethodGet, "/v1/repositories/prod/charts", ts.AdminKey, nil); strings.Contains(string(r.Body), "2.0.0") {
			t.Fatalf("%s: the chart list shows the held version: %s", when, r.Body)
		}
		if r := ts.Do(t, http.MethodGet, "/v1/search?q=web", reader, nil); strings.Contains(string(r.Body), "2.0.0") {
			t.Fatalf("%s: search finds the held version: %s", when, r.Body)
		}
	}
	invisible("held")
	// Over OCI the manifest shows to the pusher (to sign it), to nobody
	// else; the archive's blob to nobody.
	if r := ts.Do(t, http.MethodGet, "/v2/prod/web/manifests/2.0.0", ts.AdminKey, nil, "Accept", "application/vnd.oci.image.manifest.v1+json"); r.StatusCode != http.StatusOK {
		t.Fatalf("the pusher's GET of the held manifest: %d %s", r.StatusCode, r.Body)
	}
	if r := ts.Do(t, http.MethodGet, "/v2/prod/web/manifests/2.0.0", "", nil); r.StatusCode != http.StatusNotFound {
		t.Fatalf("an anonymous GET of the held manifest: %d %s", r.StatusCode, r.Body)
	}
	if r := ts.Do(t, http.MethodGet, "/v2/prod/web/blobs/"+up.Data.Digest, ts.AdminKey, nil); r.StatusCode != http.StatusNotFound {
		t.Fatalf("the pusher's GET of the held archive's blob: %d", r.StatusCode)
	}
	// The sweep leaves a version whose window is open.
	if gone, err := ts.App().SweepHeld(ctx); err != nil || len(gone) != 0 {
		t.Fatalf("sweep inside the window: %d deleted, %v", len(gone), err)
	}

	// Its .prov arrives: verified, released.
	uploadSigned(t, ts, "prod", a2, p2)
	if cv, code := heldVersion(t, ts, reader, "prod", "web", "2.0.0"); code != http.StatusOK || cv.Held || cv.HeldUntil != nil || cv.Verification == nil || cv.Verification.Status != "verified" {
		t.Fatalf("after the signature: %d %+v", code, cv)
	}
	h.Must("repo", "update")
	if out := h.Must("search", "repo", "prod/web", "--versions"); !strings.Contains(out, "2.0.0") {
		t.Fatalf("helm search repo after the release:\n%s", out)
	}
	dir := t.TempDir()
	h.Must("pull", "prod/web", "--version", "2.0.0", "-d", dir)
	if _, err := os.Stat(filepath.Join(dir, "web-2.0.0.tgz")); err != nil {
		t.Fatal(err)
	}
	h.Must("pull", "oci://"+u.Host+"/prod/web", "--version", "2.0.0", "--plain-http", "-d", t.TempDir())
	if r := ts.Do(t, http.MethodGet, "/v2/prod/web/tags/list", "", nil); !strings.Contains(string(r.Body), "2.0.0") {
		t.Fatalf("tags/list after the release: %s", r.Body)
	}

	// Unsigned pushes whose window closes are deleted, nothing else.
	for _, c := range []testkit.Chart{{Name: "web", Version: "3.0.0"}, {Name: "lonely", Version: "0.1.0"}} {
		if r := ts.Upload(t, "prod", ts.AdminKey, testkit.MakeChart(t, c), ""); r.StatusCode != http.StatusOK {
			t.Fatalf("unsigned upload %s: %d %s", c.Name, r.StatusCode, r.Body)
		}
	}
	if r := ts.Do(t, http.MethodGet, "/v2/_catalog", ts.AdminKey, nil); strings.Contains(string(r.Body), "prod/lonely") {
		t.Fatalf("_catalog lists a chart with only a held version: %s", r.Body)
	}
	clock.Advance(10*time.Minute + time.Second)
	gone, err := ts.App().SweepHeld(ctx)
	if err != nil || len(gone) != 2 {
		t.Fatalf("sweep after the window: %d deleted, %v", len(gone), err)
	}
	for _, v := range [][2]string{{"web", "3.0.0"}, {"lonely", "0.1.0"}} {
		if _, code := heldVersion(t, ts, ts.AdminKey, "prod", v[0], v[1]); code != http.StatusNotFound {
			t.Fatalf("%s %s after its window closed: %d", v[0], v[1], code)
		}
	}
	all, err := ts.Store.ChartVersions(ctx, "prod", chartctl.ChartFilter{IncludeHeld: true})
	if err != nil || len(all) != 2 || all[0].Version != "2.0.0" || all[1].Version != "1.0.0" {
		t.Fatalf("versions after the sweep: %d %v", len(all), err)
	}

	// The .prov of a held version through the ChartMuseum API (helm
	// cm-push) releases it too.
	a5, p5 := testkit.MustSignedChart(t, helmBin, "web", "5.0.0", signer)
	if r := ts.Upload(t, "prod", ts.AdminKey, a5, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("unsigned upload 5.0.0: %d %s", r.StatusCode, r.Body)
	}
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": a5, "prov": p5})
	if r := ts.Do(t, http.MethodPost, "/helm/api/prod/charts", ts.AdminKey, strings.NewReader(string(body)), "Content-Type", ctype); r.StatusCode != http.StatusCreated {
		t.Fatalf("cm-push of the held version's .prov: %d %s", r.StatusCode, r.Body)
	}
	if cv, code := heldVersion(t, ts, reader, "prod", "web", "5.0.0"); code != http.StatusOK || cv.Held {
		t.Fatalf("after the .prov through the ChartMuseum API: %d %+v", code, cv)
	}

	// A policy that stops requiring signatures releases what it held.
	if r := ts.Upload(t, "prod", ts.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "4.0.0"}), ""); r.StatusCode != http.StatusOK {
		t.Fatalf("unsigned upload 4.0.0: %d %s", r.StatusCode, r.Body)
	}
	if r := ts.DoJSON(t, http.MethodPut, "/v1/repositories/prod/policy", ts.AdminKey,
		map[string]any{"require_signature": "none", "hold_window": "10m"}); r.StatusCode != http.StatusOK {
		t.Fatalf("loosen policy: %d %s", r.StatusCode, r.Body)
	}
	if cv, code := heldVersion(t, ts, reader, "prod", "web", "4.0.0"); code != http.StatusOK || cv.Held {
		t.Fatalf("a held version after the policy stopped requiring signatures: %d %+v", code, cv)
	}

	// Audit: the releases and the deletions.
	for action, n := range map[string]int{"chart.release": 3, "chart.hold_expire": 2} {
		r := ts.Do(t, http.MethodGet, "/v1/audit?action="+action, ts.AdminKey, nil)
		var out struct {
			Data []client.AuditEntry `json:"data"`
		}
		r.JSON(t, &out)
		if len(out.Data) != n {
			t.Fatalf("audit %s: %d entries, want %d: %s", action, len(out.Data), n, r.Body)
		}
	}
	// Events: chart.held at the push, chart.released then chart.pushed at
	// the release; no chart.pushed for a version until it is released.
	ds, err := ts.Store.Deliveries(ctx, hook.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(ds) - 1; i >= 0; i-- {
		e := ds[i].Event
		if strings.HasPrefix(string(e.Type), "chart.") && e.Type != chartctl.EventChartVerified {
			got = append(got, string(e.Type)+" "+e.Subject)
		}
	}
	want := []string{"chart.pushed web/1.0.0", "chart.held web/2.0.0", "chart.released web/2.0.0", "chart.pushed web/2.0.0",
		"chart.held web/3.0.0", "chart.held lonely/0.1.0",
		"chart.held web/5.0.0", "chart.released web/5.0.0", "chart.pushed web/5.0.0", "chart.held web/4.0.0", "chart.released web/4.0.0", "chart.pushed web/4.0.0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("chart events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
