package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// mirrorCatalog is setupCatalog's server, allowed to mirror upstreams on
// 127.0.0.1, with "upstream-mirror", a public mirror in organization acme
// of a static Helm repository holding nginx 1.0.0, synced once; the
// upstream answers 503 once down is set.
type mirrorCatalog struct {
	*catalog
	upstream string
	syncer   *mirror.Syncer
	down     *bool
}

func setupMirrorCatalog(t *testing.T) *mirrorCatalog {
	t.Helper()
	archive := testkit.MakeChart(t, testkit.Chart{Name: "nginx", Version: "1.0.0", Description: "Mirrored web server"})
	sum := sha256.Sum256(archive)
	index := fmt.Sprintf("apiVersion: v1\nentries:\n  nginx:\n  - apiVersion: v2\n    name: nginx\n    version: 1.0.0\n    created: \"2025-01-02T03:04:05Z\"\n    digest: %s\n    urls: [charts/nginx-1.0.0.tgz]\n", hex.EncodeToString(sum[:]))
	down := false
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case down:
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		case r.URL.Path == "/index.yaml":
			_, _ = w.Write([]byte(index))
		case r.URL.Path == "/charts/nginx-1.0.0.tgz":
			_, _ = w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(up.Close)

	c := &catalog{Env: oauthtest.Start(t, oauthtest.Config{}, func(s *server.Server) { s.Config.AllowPrivateUpstreams = true })}
	owner := c.MustUserWithPassword(t, ownerEmail, password, false)
	c.MustUserWithPassword(t, memberEmail, password, false)
	c.ownerKey = c.MustKey(t, owner, "repo:read", "repo:write", "team:read", "team:write", "org:read", "org:write")
	c.must(t, http.MethodPost, "/v1/organizations", map[string]string{"name": "acme"})
	c.must(t, http.MethodPost, "/v1/teams", map[string]string{"name": "platform", "organization": "acme"})
	c.must(t, http.MethodPost, "/v1/teams/platform/members", map[string]string{"email": memberEmail, "role": "member"})
	c.must(t, http.MethodPost, "/v1/repositories", map[string]any{"name": "upstream-mirror", "organization": "acme", "visibility": "public",
		"mirror": map[string]string{"url": up.URL, "interval": "6h"}})
	sy := mirror.New(c.App(), c.Secrets, mirror.Options{Allow: netguard.Allowance{All: true}})
	if _, err := sy.Sync(t.Context(), "upstream-mirror"); err != nil {
		t.Fatal(err)
	}
	return &mirrorCatalog{catalog: c, upstream: up.URL, syncer: sy, down: &down}
}

// TestMirrorRepositoryPage: the repository page shows a mirror's upstream,
// status, last sync and the last error; maintainers get a CSRF-protected
// "Sync now" that records the request, others neither the button nor the
// right.
func TestMirrorRepositoryPage(t *testing.T) {
	c := setupMirrorCatalog(t)
	anon := c.NewBrowser(t).Get(t, "/repositories/upstream-mirror")
	for _, want := range []string{`id="mirror-url"`, c.upstream, "synced every 6h", `id="mirror-status">ok<`, `datetime="20`, "/repositories/upstream-mirror/charts/nginx"} {
		if !strings.Contains(anon.Body, want) {
			t.Errorf("the anonymous page lacks %q", want)
		}
	}
	if strings.Contains(anon.Body, "sync-now") || strings.Contains(anon.Body, "chartctl chart push") {
		t.Error("the anonymous page offers a sync or a push")
	}

	// The upstream fails: the page says why.
	*c.down = true
	if _, err := c.syncer.Sync(t.Context(), "upstream-mirror"); err == nil {
		t.Fatal("a sync of a down upstream succeeded")
	}
	failed := c.NewBrowser(t).Get(t, "/repositories/upstream-mirror")
	if !strings.Contains(failed.Body, `id="mirror-status">error<`) || !strings.Contains(failed.Body, "The last sync failed: ") || !strings.Contains(failed.Body, c.upstream+"/index.yaml answered 503") {
		t.Errorf("the page after a failed sync:\n%s", failed.Body)
	}

	member := c.NewBrowser(t)
	member.SignIn(t, memberEmail, password)
	mp := member.Get(t, "/repositories/upstream-mirror")
	if strings.Contains(mp.Body, "sync-now") {
		t.Error("a member sees Sync now")
	}
	if r := member.PostForm(t, "/repositories/upstream-mirror/sync", url.Values{"csrf_token": {mp.CSRF(t)}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a member's sync: %d", r.StatusCode)
	}

	owner := c.NewBrowser(t)
	owner.SignIn(t, ownerEmail, password)
	op := owner.Get(t, "/repositories/upstream-mirror")
	if !strings.Contains(op.Body, `id="sync-now"`) {
		t.Fatal("the maintainer sees no Sync now")
	}
	if r := owner.PostForm(t, "/repositories/upstream-mirror/sync", url.Values{"csrf_token": {"forged"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("sync without the CSRF token: %d", r.StatusCode)
	}
	r := owner.PostForm(t, "/repositories/upstream-mirror/sync", url.Values{"csrf_token": {op.CSRF(t)}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sync: %d %s", r.StatusCode, r.Body)
	}
	after := owner.Get(t, "/repositories/upstream-mirror?synced=1")
	if !strings.Contains(after.Body, "A sync from "+c.upstream+" has started") || !strings.Contains(after.Body, `id="mirror-status">syncing<`) {
		t.Errorf("the page after Sync now:\n%s", after.Body)
	}
	// The request is in the audit log as the owner's, after the two
	// refusals (the member's, and the owner's without a CSRF token).
	var audit struct {
		Data []struct {
			Action  string
			Outcome string
			Actor   struct{ Email *string }
		}
	}
	c.Do(t, http.MethodGet, "/v1/audit?action=repository.sync", c.ownerKey, nil).JSON(t, &audit)
	if len(audit.Data) != 3 || audit.Data[0].Outcome != "success" || audit.Data[0].Actor.Email == nil || *audit.Data[0].Actor.Email != ownerEmail ||
		audit.Data[1].Outcome != "denied" || audit.Data[2].Outcome != "denied" {
		t.Errorf("audit of the sync: %+v", audit.Data)
	}
	// A repository that is not a mirror has nothing to sync.
	c.must(t, http.MethodPost, "/v1/repositories", map[string]string{"name": "plain"})
	if r := owner.PostForm(t, "/repositories/plain/sync", url.Values{"csrf_token": {op.CSRF(t)}}); r.StatusCode != http.StatusConflict {
		t.Errorf("sync of a plain repository: %d", r.StatusCode)
	}
}

// TestBrowserMirrorSyncNow: in a real browser, the maintainer sees the
// mirror's state and starts a sync with the button.
func TestBrowserMirrorSyncNow(t *testing.T) {
	c := setupMirrorCatalog(t)
	ctx := newBrowser(t)
	signInAs(t, ctx, c.URL, ownerEmail, "%2Frepositories%2Fupstream-mirror")
	run(t, ctx, "mirror card", chromedp.WaitVisible(chromedp.CSS(`#mirror`)))
	if s := get(t, ctx, "status", chromedp.Text(chromedp.CSS(`#mirror-status`))); s != "ok" {
		t.Errorf("status %q", s)
	}
	if u := get(t, ctx, "upstream", chromedp.Text(chromedp.CSS(`#mirror-url`))); u != c.upstream {
		t.Errorf("upstream %q", u)
	}
	run(t, ctx, "sync now",
		chromedp.Click(chromedp.CSS(`#sync-now`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert-success`)),
		screenshot(t, "mirror-sync-now"),
	)
	if flash := get(t, ctx, "notice", chromedp.Text(chromedp.CSS(`.alert-success`))); !strings.Contains(flash, "A sync from "+c.upstream+" has started") {
		t.Errorf("notice %q", flash)
	}
	if s := get(t, ctx, "status after", chromedp.Text(chromedp.CSS(`#mirror-status`))); s != "syncing" {
		t.Errorf("status after Sync now %q", s)
	}
}
