package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// TestBrowserOrgWebhookLifecycle: an organization's owner, in a real
// Chromium, opens the organization's webhooks from its page, adds one (the
// signing secret shown once), pings it, sees the ping delivered to a real
// receiver on the webhook's page, and deletes the webhook after the
// confirmation page.
func TestBrowserOrgWebhookLifecycle(t *testing.T) {
	pings := make(chan string, 16)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev webhook.CloudEvent
		_ = json.Unmarshal(body, &ev)
		w.WriteHeader(http.StatusNoContent)
		pings <- ev.Type
	}))
	defer rs.Close()
	var d *webhook.Dispatcher
	env := oauthtest.Start(t, oauthtest.Config{}, func(s *server.Server) {
		s.Config.AllowPrivateWebhooks = true
		d = webhook.New(s.Store, s.Secrets, webhook.Options{AllowPrivate: true, Poll: 50 * time.Millisecond})
		s.OnEvents = d.Notify
	})
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(dctx) }()
	t.Cleanup(func() { stop(); <-done })

	owner := env.MustUserWithPassword(t, email, password, false)
	key := env.MustKey(t, owner, chartctl.AllScopes...)
	if r := env.DoJSON(t, http.MethodPost, "/v1/organizations", key, map[string]string{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("organization: %d %s", r.StatusCode, r.Body)
	}

	ctx := newBrowser(t)
	signInAs(t, ctx, env.URL, email, "%2Forganizations%2Facme")
	run(t, ctx, "add webhook",
		chromedp.Click(chromedp.CSS(`a[href="/organizations/acme/webhooks"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#url`)),
		chromedp.SendKeys(chromedp.CSS(`#url`), rs.URL+"/hook"),
		chromedp.Click(chromedp.CSS(`input[value="chart.deleted"]`)),
		screenshot(t, "org-webhooks-new"),
		chromedp.Click(chromedp.CSS(`#add-webhook`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)),
		screenshot(t, "org-webhooks-created"),
	)
	if secret := get(t, ctx, "read secret", chromedp.Value(chromedp.CSS(`#new-secret`))); !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	if events := get(t, ctx, "read events", chromedp.Text(chromedp.CSS(`#webhooks-table tbody`))); !strings.Contains(events, "chart.pushed, chart.deleted") {
		t.Errorf("listed %q", events)
	}

	run(t, ctx, "ping",
		chromedp.Click(chromedp.CSS(`#webhooks-table button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-event="ping"]`)),
	)
	select {
	case typ := <-pings:
		if typ != "io.chartctl.ping" {
			t.Fatalf("the receiver got %q", typ)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the receiver got no ping")
	}
	// The dispatcher records the attempt once its round is over: reload
	// until the page shows it.
	for i := 0; ; i++ {
		run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`tr[data-event="ping"]`)))
		if get(t, ctx, "delivered?", chromedp.Evaluate[bool](`document.querySelector('tr[data-event="ping"][data-state="delivered"]') !== null`)) {
			break
		}
		if i == 300 {
			t.Fatal("the ping never shows as delivered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	run(t, ctx, "deliveries", screenshot(t, "webhook-deliveries"))
	if row := get(t, ctx, "read delivery", chromedp.Text(chromedp.CSS(`tr[data-event="ping"]`))); !strings.Contains(row, "HTTP 204") {
		t.Errorf("delivery row %q", row)
	}

	run(t, ctx, "delete",
		chromedp.Click(chromedp.CSS(`#delete-webhook`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-delete`)),
		screenshot(t, "webhook-delete"),
		chromedp.Click(chromedp.CSS(`#confirm-delete`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert-success`)),
	)
	if flash := get(t, ctx, "read notice", chromedp.Text(chromedp.CSS(`.alert-success`))); !strings.Contains(flash, "deleted") {
		t.Errorf("notice %q", flash)
	}
	if ws, err := env.Store.Webhooks(t.Context(), "", "acme"); err != nil || len(ws) != 0 {
		t.Fatalf("after delete: %v %+v", err, ws)
	}
}
