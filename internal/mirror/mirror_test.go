package mirror_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/testkit"
)

func wantError(t *testing.T, r *testkit.Response, status int, code, param, msgPart string) {
	t.Helper()
	var env struct {
		Error struct {
			Code, Message, Parameter string
		}
	}
	r.JSON(t, &env)
	if r.StatusCode != status || env.Error.Code != code || env.Error.Parameter != param || !strings.Contains(env.Error.Message, msgPart) {
		t.Fatalf("got %d %s, want %d %s naming %q and saying %q", r.StatusCode, r.Body, status, code, param, msgPart)
	}
}

// TestMirrorCopiesUpstream: a mirror copies every version of a static
// repository behind basic auth with their created times, announces each
// as a push by the mirror in the audit log, follows a version added
// upstream after the next sync, and never shows or stores its password in
// the clear.
func TestMirrorCopiesUpstream(t *testing.T) {
	e := setup(t, envOptions{})
	up := newStaticRepo(t)
	up.user, up.pass = "reader", "upstream-s3cret-pw"
	created := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
	alpha := up.add(t, "alpha", "0.1.0", created)
	up.add(t, "beta", "1.0.0", created.Add(time.Hour))

	item := e.createMirror(t, "mirrored", map[string]string{"url": up.URL + "/index.yaml", "interval": "30m", "username": "reader", "password": up.pass})
	if item.Mirror == nil || item.Mirror.URL != up.URL || item.Mirror.Interval != "30m" || item.Mirror.Status != "syncing" ||
		item.Mirror.LastSyncAt != nil || item.Mirror.Username != "reader" {
		t.Fatalf("created mirror = %+v", item.Mirror)
	}
	res, err := e.Syncer.Sync(t.Context(), "mirrored")
	if err != nil || strings.Join(res.Added, ",") != "alpha 0.1.0,beta 1.0.0" {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	got := e.repo(t, "mirrored")
	if got.Mirror.Status != "ok" || got.Mirror.LastSyncAt == nil || got.Mirror.Error != "" {
		t.Fatalf("after the sync: %+v", got.Mirror)
	}
	r := e.Do(t, "GET", "/v1/repositories/mirrored/charts/alpha/0.1.0", e.AdminKey, nil)
	var cv struct{ Data client.Chart }
	r.JSON(t, &cv)
	if !cv.Data.CreatedAt.Equal(created) {
		t.Errorf("alpha 0.1.0 created_at = %v, want the upstream's %v", cv.Data.CreatedAt, created)
	}
	if dl := e.Do(t, "GET", "/helm/mirrored/charts/alpha-0.1.0.tgz", e.AdminKey, nil); !bytes.Equal(dl.Body, alpha) {
		t.Error("the mirrored archive differs from the upstream's")
	}

	// Each copied version is a push by the mirror, in the audit log.
	c := clientFor(t, e, e.AdminKey)
	pushes, _, err := c.Audit.List(t.Context(), &client.AuditOptions{Action: "chart.push"})
	if err != nil || len(pushes) != 2 {
		t.Fatalf("audit: %v %+v", err, pushes)
	}
	for _, p := range pushes {
		if p.Credential.Kind == nil || *p.Credential.Kind != "mirror" || p.Actor.UserID != nil || p.Outcome != "success" {
			t.Errorf("push entry %+v (credential %v)", p, p.Credential)
		}
	}

	// Nothing new: nothing copied. A version added upstream: copied by
	// the next sync.
	if res, err := e.Syncer.Sync(t.Context(), "mirrored"); err != nil || len(res.Added) != 0 {
		t.Fatalf("second sync: %+v, %v", res, err)
	}
	up.add(t, "alpha", "0.2.0", created.Add(48*time.Hour))
	if res, err := e.Syncer.Sync(t.Context(), "mirrored"); err != nil || strings.Join(res.Added, ",") != "alpha 0.2.0" {
		t.Fatalf("third sync: %+v, %v", res, err)
	}
	if v := strings.Join(e.versions(t, "mirrored"), " "); v != "alpha@0.1.0 alpha@0.2.0 beta@1.0.0" {
		t.Fatalf("versions = %s", v)
	}

	// The password is never shown, and stored only sealed.
	for _, path := range []string{"/v1/repositories/mirrored", "/v1/repositories", "/v1/audit?limit=100"} {
		if b := e.Do(t, "GET", path, e.AdminKey, nil).Body; bytes.Contains(b, []byte(up.pass)) {
			t.Errorf("GET %s shows the upstream password: %s", path, b)
		}
	}
	raw, err := os.ReadFile(filepath.Join(e.Dir, "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(up.pass)) {
		t.Error("the bolt file holds the upstream password in the clear")
	}
	if !bytes.Contains(raw, []byte(`"username":"reader"`)) {
		t.Error("the bolt file does not hold the mirror record this test looks into")
	}
}

func clientFor(t *testing.T, e *env, key string) *client.Client {
	t.Helper()
	c, err := client.New(e.URL, client.WithToken(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMirrorUpstreamDown: a failing upstream turns the status to error
// with the upstream's answer, keeps the last sync time, and the mirror
// goes on serving what it has; back up, the next sync is ok.
func TestMirrorUpstreamDown(t *testing.T) {
	e := setup(t, envOptions{})
	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", time.Now())
	e.createMirror(t, "m", map[string]string{"url": up.URL})
	if _, err := e.Syncer.Sync(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
	synced := e.repo(t, "m").Mirror.LastSyncAt

	up.setDown(true)
	_, err := e.Syncer.Sync(t.Context(), "m")
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("sync of a down upstream: %v", err)
	}
	m := e.repo(t, "m").Mirror
	if m.Status != "error" || !strings.Contains(m.Error, up.URL+"/index.yaml answered 503") || m.LastSyncAt == nil || !m.LastSyncAt.Equal(*synced) {
		t.Fatalf("status after the failure: %+v", m)
	}
	if r := e.Do(t, "GET", "/helm/m/index.yaml", e.AdminKey, nil); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("alpha")) {
		t.Fatalf("index.yaml while the upstream is down: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "GET", "/helm/m/charts/alpha-0.1.0.tgz", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("download while the upstream is down: %d", r.StatusCode)
	}

	// A version whose archive is gone upstream fails alone, named.
	up.setDown(false)
	up.add(t, "beta", "1.0.0", time.Now())
	up.mu.Lock()
	delete(up.files, "charts/beta-1.0.0.tgz")
	up.mu.Unlock()
	_, err = e.Syncer.Sync(t.Context(), "m")
	if m := e.repo(t, "m").Mirror; err == nil || m.Status != "error" || !strings.Contains(m.Error, "1 of 1 new versions could not be copied: beta 1.0.0:") || !strings.Contains(m.Error, "404") {
		t.Fatalf("missing archive: %v, %+v", err, m)
	}
	up.add(t, "beta", "1.0.1", time.Now())
	up.mu.Lock()
	up.files["charts/beta-1.0.0.tgz"] = testkit.MakeChart(t, testkit.Chart{Name: "beta", Version: "1.0.0"})
	up.mu.Unlock()
	if _, err := e.Syncer.Sync(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
	if m := e.repo(t, "m").Mirror; m.Status != "ok" || m.Error != "" || m.LastSyncAt.Before(*synced) {
		t.Fatalf("status after recovery: %+v", m)
	}
	if v := strings.Join(e.versions(t, "m"), " "); v != "alpha@0.1.0 beta@1.0.0 beta@1.0.1" {
		t.Fatalf("versions = %s", v)
	}
}

// TestMirrorRefusesWrites: every protocol's write to a mirror's charts is
// 403 naming the upstream; its settings, webhooks and deletion stay the
// owner's.
func TestMirrorRefusesWrites(t *testing.T) {
	e := setup(t, envOptions{})
	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", time.Now())
	e.createMirror(t, "m", map[string]string{"url": up.URL})
	if _, err := e.Syncer.Sync(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
	msg := `is a read-only mirror of ` + up.URL
	archive := testkit.MakeChart(t, testkit.Chart{Name: "alpha", Version: "9.9.9"})

	wantError(t, e.Upload(t, "m", e.AdminKey, archive, ""), 403, "forbidden", "", msg)
	wantError(t, e.Do(t, "DELETE", "/v1/repositories/m/charts/alpha/0.1.0", e.AdminKey, nil), 403, "forbidden", "", msg)
	wantError(t, e.DoJSON(t, "PUT", "/v1/repositories/m/retention", e.AdminKey, map[string]any{"keep_latest": 1}), 403, "forbidden", "", msg)
	wantError(t, e.Do(t, "POST", "/v1/repositories/m/retention/run", e.AdminKey, nil), 403, "forbidden", "", msg)

	// ChartMuseum's API, as helm cm-push sends it.
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	for _, r := range []*testkit.Response{
		e.Do(t, "POST", "/helm/api/m/charts", e.AdminKey, bytes.NewReader(body), "Content-Type", ctype),
		e.Do(t, "DELETE", "/helm/api/m/charts/alpha/0.1.0", e.AdminKey, nil),
	} {
		if r.StatusCode != 403 || !strings.Contains(string(r.Body), msg) {
			t.Fatalf("ChartMuseum write: %d %s", r.StatusCode, r.Body)
		}
	}
	// The OCI registry: starting a blob upload and deleting a manifest.
	for _, r := range []*testkit.Response{
		e.Do(t, "POST", "/v2/m/alpha/blobs/uploads/", e.AdminKey, nil),
		e.Do(t, "DELETE", "/v2/m/alpha/manifests/0.1.0", e.AdminKey, nil),
	} {
		if r.StatusCode != 403 || !strings.Contains(string(r.Body), "DENIED") || !strings.Contains(string(r.Body), msg) {
			t.Fatalf("OCI write: %d %s", r.StatusCode, r.Body)
		}
	}
	// Pulls work over OCI too.
	if r := e.Do(t, "GET", "/v2/m/alpha/tags/list", e.AdminKey, nil); r.StatusCode != 200 || !strings.Contains(string(r.Body), "0.1.0") {
		t.Fatalf("OCI tags: %d %s", r.StatusCode, r.Body)
	}
	if v := strings.Join(e.versions(t, "m"), " "); v != "alpha@0.1.0" {
		t.Fatalf("versions after refused writes = %s", v)
	}
	// The owner still manages the repository itself.
	if r := e.DoJSON(t, "PATCH", "/v1/repositories/m", e.AdminKey, map[string]any{"description": "Mirror of upstream"}); r.StatusCode != 200 {
		t.Fatalf("patch description: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, "DELETE", "/v1/repositories/m", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete the mirror: %d %s", r.StatusCode, r.Body)
	}
}

// TestMirrorSettings: what POST and PATCH accept, and who may ask for a
// sync.
func TestMirrorSettings(t *testing.T) {
	e := setup(t, envOptions{})
	up := newStaticRepo(t)
	for _, c := range []struct {
		mirror  map[string]string
		param   string
		message string
	}{
		{map[string]string{"interval": "1h"}, "mirror.url", "mirror.url is required"},
		{map[string]string{"url": "ftp://example.com/charts"}, "mirror.url", "http or https"},
		{map[string]string{"url": "https://user:pw@example.com/charts"}, "mirror.url", "must not carry credentials"},
		{map[string]string{"url": up.URL, "interval": "4m"}, "mirror.interval", "at least 5m"},
		{map[string]string{"url": up.URL, "interval": "366d"}, "mirror.interval", "at most 365d"},
		{map[string]string{"url": up.URL, "interval": "soon"}, "mirror.interval", "30m, 12h or 7d"},
		{map[string]string{"url": up.URL, "username": "a:b"}, "mirror.username", "without ':'"},
	} {
		r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, map[string]any{"name": "bad", "mirror": c.mirror})
		wantError(t, r, 400, "invalid_parameter", c.param, c.message)
	}
	if r := e.Do(t, "GET", "/v1/repositories/bad", e.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("a refused mirror was created: %d", r.StatusCode)
	}

	m := e.createMirror(t, "weekly", map[string]string{"url": up.URL + "/", "interval": "7d"})
	if m.Mirror.Interval != "7d" || m.Mirror.URL != up.URL {
		t.Fatalf("created %+v", m.Mirror)
	}
	if d := e.createMirror(t, "hourly", map[string]string{"url": up.URL}); d.Mirror.Interval != "1h" {
		t.Fatalf("default interval %q", d.Mirror.Interval)
	}
	// PATCH changes the settings it names and keeps the others.
	r := e.DoJSON(t, "PATCH", "/v1/repositories/weekly", e.AdminKey, map[string]any{"mirror": map[string]string{"interval": "90m", "username": "bot", "password": "pw-1"}})
	var upd struct{ Data client.Repository }
	r.JSON(t, &upd)
	if r.StatusCode != 200 || upd.Data.Mirror.Interval != "1h30m" || upd.Data.Mirror.Username != "bot" || upd.Data.Mirror.URL != up.URL || strings.Contains(string(r.Body), "pw-1") {
		t.Fatalf("patch: %d %s", r.StatusCode, r.Body)
	}
	wantError(t, e.DoJSON(t, "PATCH", "/v1/repositories/weekly", e.AdminKey, map[string]any{"mirror": map[string]string{"interval": "1m"}}), 400, "invalid_parameter", "mirror.interval", "at least 5m")
	e.MustRepo(t, "plain", "private")
	wantError(t, e.DoJSON(t, "PATCH", "/v1/repositories/plain", e.AdminKey, map[string]any{"mirror": map[string]string{"interval": "1h"}}), 400, "invalid_parameter", "mirror", "is not a mirror")
	wantError(t, e.Do(t, "POST", "/v1/repositories/plain/sync", e.AdminKey, nil), 409, "conflict", "", "is not a mirror")
	wantError(t, e.Do(t, "POST", "/v1/repositories/missing/sync", e.AdminKey, nil), 404, "not_found", "", "")

	// A sync needs repo:write and the maintainer role.
	reader := e.MustUser(t, "reader@example.com", false)
	readKey := e.MustKey(t, reader, chartctl.ScopeRepoRead)
	if r := e.DoJSON(t, "PATCH", "/v1/repositories/weekly", e.AdminKey, map[string]any{"visibility": "public"}); r.StatusCode != 200 {
		t.Fatal(r.StatusCode)
	}
	wantError(t, e.Do(t, "POST", "/v1/repositories/weekly/sync", readKey, nil), 403, "forbidden", "", "repo:write")
	writeKey := e.MustKey(t, reader, chartctl.ScopeRepoWrite)
	wantError(t, e.Do(t, "POST", "/v1/repositories/weekly/sync", writeKey, nil), 403, "forbidden", "", "owner")
	r = e.Do(t, "POST", "/v1/repositories/weekly/sync", e.AdminKey, nil)
	var synced struct{ Data client.Repository }
	r.JSON(t, &synced)
	if r.StatusCode != 200 || synced.Data.Mirror.Status != "syncing" {
		t.Fatalf("sync: %d %s", r.StatusCode, r.Body)
	}
}

// TestMirrorSyncNow: POST …/sync wakes the syncer, whose run copies what
// the upstream added without waiting for the interval.
func TestMirrorSyncNow(t *testing.T) {
	e := setup(t, envOptions{})
	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", time.Now())
	e.createMirror(t, "m", map[string]string{"url": up.URL, "interval": "24h"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Syncer.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first sync", func() bool {
		return e.repo(t, "m").Mirror.Status == "ok"
	})

	up.add(t, "alpha", "0.2.0", time.Now())
	if r := e.Do(t, "POST", "/v1/repositories/m/sync", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("sync: %d %s", r.StatusCode, r.Body)
	}
	waitFor(t, "the requested sync", func() bool {
		return e.repo(t, "m").Mirror.Status == "ok" && strings.Join(e.versions(t, "m"), " ") == "alpha@0.1.0 alpha@0.2.0"
	})
}

// waitFor polls cond until it holds, failing the test after a bound far
// beyond what it takes (no assertion on time: a guard against hanging).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMirrorSchedule: RunDue syncs a mirror when it is new, then not
// again until its interval has passed since the last sync.
func TestMirrorSchedule(t *testing.T) {
	now := time.Date(2026, 2, 3, 4, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	e := setup(t, envOptions{now: clock})
	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", now)
	e.createMirror(t, "m", map[string]string{"url": up.URL, "interval": "1h"})
	e.Syncer.RunDue(t.Context())
	if v := strings.Join(e.versions(t, "m"), " "); v != "alpha@0.1.0" {
		t.Fatalf("after the first run: %s", v)
	}
	up.add(t, "alpha", "0.2.0", now)
	now = now.Add(59 * time.Minute)
	e.Syncer.RunDue(t.Context())
	if v := strings.Join(e.versions(t, "m"), " "); v != "alpha@0.1.0" {
		t.Fatalf("synced before the interval: %s", v)
	}
	now = now.Add(time.Minute)
	e.Syncer.RunDue(t.Context())
	if v := strings.Join(e.versions(t, "m"), " "); v != "alpha@0.1.0 alpha@0.2.0" {
		t.Fatalf("not synced at the interval: %s", v)
	}
	if last := e.repo(t, "m").Mirror.LastSyncAt; !last.Equal(now) {
		t.Fatalf("last_sync_at = %v, want %v", last, now)
	}
}

// TestMirrorLease: while another holder has a mirror's lease (another
// replica syncing it), a sync here does nothing.
func TestMirrorLease(t *testing.T) {
	e := setup(t, envOptions{})
	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", time.Now())
	e.createMirror(t, "m", map[string]string{"url": up.URL})
	if ok, err := e.Store.AcquireLease(t.Context(), "mirror:m", "replica-2", time.Hour); err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	if _, err := e.Syncer.Sync(t.Context(), "m"); !errors.Is(err, mirror.ErrBusy) {
		t.Fatalf("sync under another holder's lease: %v", err)
	}
	e.Syncer.RunDue(t.Context())
	if v := e.versions(t, "m"); len(v) != 0 || e.repo(t, "m").Mirror.Status != "syncing" {
		t.Fatalf("synced under another holder's lease: %v", v)
	}
	if err := e.Store.ReleaseLease(t.Context(), "mirror:m", "replica-2"); err != nil {
		t.Fatal(err)
	}
	e.Syncer.RunDue(t.Context())
	if v := strings.Join(e.versions(t, "m"), " "); v != "alpha@0.1.0" {
		t.Fatalf("after the lease was released: %s", v)
	}
}

// TestMirrorPrivateUpstreamRefused: without --allow-private-upstreams a
// loopback address is refused when the mirror is created, and a name
// that resolves to one passes that check but is refused when the sync
// connects, so DNS cannot point a mirror inside the network.
func TestMirrorPrivateUpstreamRefused(t *testing.T) {
	e := setup(t, envOptions{denyPrivate: true})
	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", time.Now())
	r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, map[string]any{"name": "m", "mirror": map[string]string{"url": up.URL}})
	wantError(t, r, 400, "invalid_parameter", "mirror.url", "--allow-private-upstreams")

	u, _ := url.Parse(up.URL)
	_, port, _ := net.SplitHostPort(u.Host)
	byName := "http://localhost:" + port
	e.createMirror(t, "m", map[string]string{"url": byName})
	_, err := e.Syncer.Sync(t.Context(), "m")
	m := e.repo(t, "m").Mirror
	// The status names the host as the mirror's URL does, never the
	// address it resolved to.
	if err == nil || m.Status != "error" || !strings.Contains(m.Error, "could not connect to localhost:"+port+": it is at a private or loopback address") ||
		!strings.Contains(m.Error, "--allow-private-upstreams") || strings.Contains(m.Error, "127.0.0.1") || strings.Contains(m.Error, "::1") {
		t.Fatalf("sync of a name resolving to loopback: %v, %+v", err, m)
	}
	if v := e.versions(t, "m"); len(v) != 0 {
		t.Fatalf("copied from a refused upstream: %v", v)
	}
}
