package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// receiver is a webhook endpoint that verifies each delivery with the
// Standard Webhooks reference library (an implementation independent of
// chartctl's) and refuses the first failFirst deliveries with 503.
type receiver struct {
	t         *testing.T
	mu        sync.Mutex
	verifier  *standardwebhooks.Webhook
	failFirst int
	seen      int
	acked     []webhook.CloudEvent
	bodies    []string
	bad       []string
	changed   chan struct{}
}

func newReceiver(t *testing.T, failFirst int) (*receiver, *httptest.Server) {
	rc := &receiver{t: t, failFirst: failFirst, changed: make(chan struct{}, 1)}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) setSecret(secret string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		rc.t.Errorf("secret %q: %v", secret, err)
	}
	rc.verifier = v
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer func() {
		rc.mu.Unlock()
		select {
		case rc.changed <- struct{}{}:
		default:
		}
	}()
	if rc.verifier == nil || rc.verifier.Verify(body, r.Header) != nil {
		rc.bad = append(rc.bad, "bad signature: "+string(body))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/cloudevents+json" {
		rc.bad = append(rc.bad, "content type "+ct)
	}
	rc.seen++
	if rc.seen <= rc.failFirst {
		http.Error(w, "receiver down for maintenance", http.StatusServiceUnavailable)
		return
	}
	var ev webhook.CloudEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		rc.bad = append(rc.bad, "not JSON: "+string(body))
	}
	if ev.ID != r.Header.Get("webhook-id") {
		rc.bad = append(rc.bad, "id "+ev.ID+" != webhook-id "+r.Header.Get("webhook-id"))
	}
	rc.acked = append(rc.acked, ev)
	rc.bodies = append(rc.bodies, string(body))
	w.WriteHeader(http.StatusNoContent)
}

// waitFor waits until the receiver has acknowledged n events.
func (rc *receiver) waitFor(n int) []webhook.CloudEvent {
	rc.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		rc.mu.Lock()
		got := append([]webhook.CloudEvent(nil), rc.acked...)
		bad := append([]string(nil), rc.bad...)
		rc.mu.Unlock()
		if len(bad) > 0 {
			rc.t.Fatalf("receiver refused deliveries: %v", bad)
		}
		if len(got) >= n {
			return got
		}
		select {
		case <-rc.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			rc.t.Fatalf("received %d of %d events: %+v", len(got), n, got)
		}
	}
}

// startWithDispatcher starts a test server whose webhook dispatcher runs
// until the test ends, retrying quickly.
func startWithDispatcher(t *testing.T) *testkit.Server {
	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	var d *webhook.Dispatcher
	s := testkit.StartServer(t, func(srv *server.Server) {
		d = webhook.New(srv.Store, box, webhook.Options{RetryBase: 20 * time.Millisecond, Poll: 20 * time.Millisecond, AllowPrivate: true})
		srv.Secrets, srv.OnEvents = box, d.Notify
		srv.Config.AllowPrivateWebhooks = true
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// TestWebhookEveryEventSignedInOrder: a server-wide webhook receives an
// event for every action and protocol, signed so the reference verifier
// accepts it; the receiver fails the first deliveries and then recovers,
// and still gets every event, acknowledged once each, in order.
func TestWebhookEveryEventSignedInOrder(t *testing.T) {
	s := startWithDispatcher(t)
	rc, rs := newReceiver(t, 3)
	c := clientFor(t, s, s.AdminKey)
	ctx := t.Context()
	hook, _, err := c.Webhooks.Create(ctx, client.WebhookScope{}, &client.WebhookRequest{URL: rs.URL + "/hook", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hook.Secret, "whsec_") || !hook.Active {
		t.Fatalf("created %+v", hook)
	}
	rc.setSecret(hook.Secret)
	if got, _, err := c.Webhooks.Get(ctx, hook.ID); err != nil || got.Secret != "" {
		t.Fatalf("the secret is shown on create only: %v %+v", err, got)
	}

	s.MustRepo(t, "apps", "")
	must := func(r *testkit.Response) *testkit.Response {
		t.Helper()
		if r.StatusCode/100 != 2 {
			t.Fatalf("%d %s", r.StatusCode, r.Body)
		}
		return r
	}
	must(s.Upload(t, "apps", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}), ""))
	cm, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"})})
	must(s.Do(t, "POST", "/helm/api/apps/charts", s.AdminKey, bytes.NewReader(cm), "Content-Type", ctype))
	must(s.Do(t, "DELETE", "/helm/api/apps/charts/web/2.0.0", s.AdminKey, nil))
	must(s.Do(t, "DELETE", "/v1/repositories/apps/charts/web/1.0.0", s.AdminKey, nil))
	must(s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams", s.AdminKey, map[string]string{"name": "ops", "organization": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams/ops/members", s.AdminKey, map[string]string{"email": "dev@example.com"}))
	must(s.DoJSON(t, "PATCH", "/v1/teams/ops/members/dev@example.com", s.AdminKey, map[string]string{"role": "owner"}))
	must(s.Do(t, "DELETE", "/v1/teams/ops/members/dev@example.com", s.AdminKey, nil))
	var key envelope[client.APIKey]
	must(s.DoJSON(t, "POST", "/v1/user/api-keys", s.AdminKey, map[string]any{"name": "ci", "scopes": []string{"repo:read"}})).JSON(t, &key)
	must(s.Do(t, "DELETE", "/v1/user/api-keys/"+key.Data.ID, s.AdminKey, nil))
	must(s.Do(t, "DELETE", "/v1/repositories/apps", s.AdminKey, nil))

	want := []string{"repository.created", "chart.pushed", "chart.pushed", "chart.deleted", "chart.deleted",
		"team.member_added", "team.member_role_changed", "team.member_removed", "api_key.created", "api_key.revoked", "repository.deleted"}
	got := rc.waitFor(len(want))
	var types []string
	ids := map[string]bool{}
	for _, ev := range got {
		types = append(types, strings.TrimPrefix(ev.Type, "io.chartctl."))
		if ids[ev.ID] {
			t.Errorf("event %s acknowledged twice", ev.ID)
		}
		ids[ev.ID] = true
		if ev.SpecVersion != "1.0" || ev.DataContentType != "application/json" || !strings.HasPrefix(ev.Source, "/v1/") || ev.Time == "" {
			t.Errorf("not a CloudEvent as §15 says: %+v", ev)
		}
	}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n got %v\nwant %v", types, want)
	}
	var pushed struct {
		Repository, Name, Version string
		Actor                     struct{ Email string }
	}
	if err := json.Unmarshal(got[1].Data, &pushed); err != nil || pushed.Repository != "apps" || pushed.Name != "web" || pushed.Version != "1.0.0" || pushed.Actor.Email != "admin@example.com" {
		t.Fatalf("chart.pushed data %s: %v", got[1].Data, err)
	}
	if got[1].Subject != "web/1.0.0" || got[1].Source != "/v1/repositories/apps/charts/web/1.0.0" {
		t.Fatalf("chart.pushed subject %q source %q", got[1].Subject, got[1].Source)
	}
	for _, b := range rc.bodies {
		if strings.Contains(b, "chartctl_") {
			t.Fatalf("a delivery carries a key value: %s", b)
		}
	}

	// The first delivery's attempts are visible: three 503s, then 204.
	// (The dispatcher records a round's attempts when the round is over,
	// which may be just after the receiver acknowledged the last event.)
	var first *client.Delivery
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ds, _, err := c.Webhooks.Deliveries(ctx, hook.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if first = ds[len(ds)-1]; first.State != "pending" || time.Now().After(deadline) {
			break
		}
	}
	if first.EventType != "repository.created" || first.State != "delivered" || first.Attempt != 4 || *first.StatusCode != 204 ||
		first.DeliveredAt == nil || first.NextAttemptAt != nil || *first.Attempts[0].StatusCode != 503 ||
		!strings.Contains(first.Attempts[0].ResponseExcerpt, "maintenance") {
		t.Fatalf("first delivery %+v", first)
	}

	// Redelivery sends the same event again; a ping reaches the webhook
	// whatever it asked for.
	if _, _, err := c.Webhooks.Redeliver(ctx, hook.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Webhooks.Ping(ctx, hook.ID); err != nil {
		t.Fatal(err)
	}
	got = rc.waitFor(len(want) + 2)
	if got[len(want)].ID != got[0].ID || got[len(want)+1].Type != "io.chartctl.ping" {
		t.Fatalf("redelivery %+v, ping %+v", got[len(want)], got[len(want)+1])
	}
}

// TestWebhookScopesAndPermissions: a repository webhook receives only its
// repository's events; a member cannot manage it, nor see it; server-wide
// webhooks need an admin.
func TestWebhookScopesAndPermissions(t *testing.T) {
	s := startWithDispatcher(t)
	rc, rs := newReceiver(t, 0)
	c := clientFor(t, s, s.AdminKey)
	ctx := t.Context()
	s.MustRepo(t, "one", "")
	s.MustRepo(t, "two", "")
	hook, _, err := c.Webhooks.Create(ctx, client.WebhookScope{Repository: "one"}, &client.WebhookRequest{URL: rs.URL, Events: []string{"chart.pushed"},
		Secret: "whsec_" + strings.Repeat("QUJD", 8)})
	if err != nil {
		t.Fatal(err)
	}
	rc.setSecret(hook.Secret)
	for _, repo := range []string{"two", "one"} {
		if r := s.Upload(t, repo, s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "1.0.0"}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	got := rc.waitFor(1)
	if len(got) != 1 || !strings.Contains(string(got[0].Data), `"repository":"one"`) {
		t.Fatalf("got %+v", got)
	}

	dev := s.MustUser(t, "dev@example.com", false)
	devKey := s.MustKey(t, dev, chartctl.AllScopes...)
	expectError(t, s.Do(t, "GET", "/v1/webhooks/"+hook.ID, devKey, nil), 404, "not_found", "")
	expectError(t, s.DoJSON(t, "POST", "/v1/admin/webhooks", devKey, map[string]any{"url": rs.URL, "events": []string{"*"}}), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "POST", "/v1/repositories/one/webhooks", s.AdminKey, map[string]any{"url": rs.URL, "events": []string{"chart.exploded"}}), 400, "invalid_parameter", "events")
	expectError(t, s.DoJSON(t, "POST", "/v1/repositories/one/webhooks", s.AdminKey, map[string]any{"url": "ftp://example.com", "events": []string{"*"}}), 400, "invalid_parameter", "url")
	if r := s.DoJSON(t, "PATCH", "/v1/webhooks/"+hook.ID, s.AdminKey, map[string]any{"active": false}); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"active":false`)) {
		t.Fatalf("disable: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "DELETE", "/v1/webhooks/"+hook.ID, s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "GET", "/v1/webhooks/"+hook.ID+"/deliveries", s.AdminKey, nil), 404, "not_found", "")
}

// TestWebhookPrivateTargetRefused: without --allow-private-webhooks a
// literal private address is refused when saved, and a name that resolves
// to one (localhost) when the delivery connects.
func TestWebhookPrivateTargetRefused(t *testing.T) {
	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	var d *webhook.Dispatcher
	s := testkit.StartServer(t, func(srv *server.Server) {
		d = webhook.New(srv.Store, box, webhook.Options{RetryBase: time.Hour})
		srv.Secrets, srv.OnEvents = box, d.Notify
	})
	hit := false
	rs := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer rs.Close()
	for _, u := range []string{rs.URL, "http://10.0.0.8/hook", "http://[::1]:80/", "http://169.254.169.254/latest/meta-data"} {
		expectError(t, s.DoJSON(t, "POST", "/v1/admin/webhooks", s.AdminKey, map[string]any{"url": u, "events": []string{"*"}}), 400, "invalid_parameter", "url")
	}
	byName := strings.Replace(rs.URL, "127.0.0.1", "localhost", 1)
	r := s.DoJSON(t, "POST", "/v1/admin/webhooks", s.AdminKey, map[string]any{"url": byName, "events": []string{"*"}})
	var hook envelope[client.Webhook]
	r.JSON(t, &hook)
	if r.StatusCode != 200 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	s.MustRepo(t, "apps", "")
	if n := d.RunOnce(t.Context()); n != 1 {
		t.Fatalf("sent %d deliveries", n)
	}
	c := clientFor(t, s, s.AdminKey)
	ds, _, err := c.Webhooks.Deliveries(t.Context(), hook.Data.ID, 0)
	if err != nil || len(ds) != 1 {
		t.Fatal(err, ds)
	}
	if hit || ds[0].State != "pending" || ds[0].StatusCode != nil || !strings.Contains(*ds[0].ResponseExcerpt, "private address") || ds[0].NextAttemptAt == nil {
		t.Fatalf("hit=%v delivery %+v excerpt %q", hit, ds[0], *ds[0].ResponseExcerpt)
	}
}
