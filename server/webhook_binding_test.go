package server_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// shiftedClock is the store's clock, moved by a test (across the name
// grace of a deleted repository).
type shiftedClock struct {
	mu    sync.Mutex
	shift time.Duration
}

func (c *shiftedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.shift)
}

func (c *shiftedClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shift += d
}

// Regression (issue 27, N1): a repository webhook outlived its
// repository. Ann deleted "r"; once its name was free, Bob created "r",
// and Ann's webhook received Bob's private events (chart names,
// descriptions, digests, Bob's email) and appeared in Bob's webhook list.
// Webhooks are bound to the repository's ID and deleted with it.
func TestWebhookDoesNotOutliveItsRepository(t *testing.T) {
	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	// Ann's part happens a name grace ago: the store's clock then joins
	// the dispatcher's (and the receivers', which check the signature's
	// time) for Bob's.
	clk := &shiftedClock{shift: -bolt.DefaultNameGrace - time.Hour}
	var d *webhook.Dispatcher
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Store.(*bolt.DB).Now = clk.Now
		d = webhook.New(srv.Store, box, webhook.Options{RetryBase: 20 * time.Millisecond, Poll: 20 * time.Millisecond, AllowPrivate: true})
		srv.Secrets, srv.OnEvents = box, d.Notify
		srv.Config.AllowPrivateWebhooks = true
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	ann := s.MustKey(t, s.MustUser(t, "ann@example.com", false), chartctl.AllScopes...)
	bob := s.MustKey(t, s.MustUser(t, "bob@example.com", false), chartctl.AllScopes...)
	annRC, annRS := newReceiver(t, 0)
	adminRC, adminRS := newReceiver(t, 0)
	annC, bobC, adminC := clientFor(t, s, ann), clientFor(t, s, bob), clientFor(t, s, s.AdminKey)

	if r := s.DoJSON(t, "POST", "/v1/repositories", ann, map[string]string{"name": "r"}); r.StatusCode != 200 {
		t.Fatalf("ann creates r: %d %s", r.StatusCode, r.Body)
	}
	annHook, _, err := annC.Webhooks.Create(t.Context(), client.WebhookScope{Repository: "r"}, &client.WebhookRequest{URL: annRS.URL, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	annRC.setSecret(annHook.Secret)
	// A server-wide webhook sees every event: once it has Bob's push, the
	// push's deliveries to every webhook that wanted it were queued.
	adminHook, _, err := adminC.Webhooks.Create(t.Context(), client.WebhookScope{}, &client.WebhookRequest{URL: adminRS.URL, Events: []string{"chart.pushed"}})
	if err != nil {
		t.Fatal(err)
	}
	adminRC.setSecret(adminHook.Secret)
	if r := s.Do(t, "DELETE", "/v1/repositories/r", ann, nil); r.StatusCode != 200 {
		t.Fatalf("ann deletes r: %d %s", r.StatusCode, r.Body)
	}

	clk.Add(bolt.DefaultNameGrace + time.Hour)
	if r := s.DoJSON(t, "POST", "/v1/repositories", bob, map[string]string{"name": "r"}); r.StatusCode != 200 {
		t.Fatalf("bob creates r: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Upload(t, "r", bob, testkit.MakeChart(t, testkit.Chart{Name: "bobs-secret-app", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("bob pushes: %d %s", r.StatusCode, r.Body)
	}
	adminRC.waitFor(1)

	hooks, _, err := bobC.Webhooks.List(t.Context(), client.WebhookScope{Repository: "r"})
	if err != nil || len(hooks) != 0 {
		t.Fatalf("bob's webhook list shows %+v, %v", hooks, err)
	}
	if _, _, err := annC.Webhooks.Get(t.Context(), annHook.ID); !client.IsNotFound(err) {
		t.Fatalf("ann's webhook after r was deleted: %v", err)
	}
	if _, _, err := adminC.Webhooks.Deliveries(t.Context(), annHook.ID, 0); !client.IsNotFound(err) {
		t.Fatalf("deliveries of ann's webhook: %v", err)
	}
	annRC.mu.Lock()
	defer annRC.mu.Unlock()
	for _, b := range append(annRC.bodies, annRC.bad...) {
		if strings.Contains(b, "bobs-secret-app") || strings.Contains(b, "bob@example.com") {
			t.Fatalf("ann's receiver got bob's event: %s", b)
		}
	}
	// Ann can no longer create a webhook in the r she lost either.
	_, _, err = annC.Webhooks.Create(t.Context(), client.WebhookScope{Repository: "r"}, &client.WebhookRequest{URL: annRS.URL, Events: []string{"*"}})
	if !client.IsNotFound(err) {
		t.Fatalf("ann creates a webhook in bob's r: %v", err)
	}
}
