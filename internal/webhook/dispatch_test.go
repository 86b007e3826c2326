package webhook_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/webhook"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func setup(t *testing.T, clk *clock) (*bolt.DB, *secrets.Box) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.Now = clk.Now
	box, err := secrets.New(bytes.Repeat([]byte("x"), 40))
	if err != nil {
		t.Fatal(err)
	}
	return db, box
}

func addHook(t *testing.T, db *bolt.DB, box *secrets.Box, url string) *chartctl.Webhook {
	t.Helper()
	sealed, err := box.Seal([]byte(webhook.NewSecret()))
	if err != nil {
		t.Fatal(err)
	}
	w := &chartctl.Webhook{URL: url, Events: []string{"*"}, Active: true, Secret: sealed}
	if err := db.CreateWebhook(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestGivenUpAfterADayDisablesTheWebhook: a delivery failing for the
// whole retry window is given up, and its webhook disabled with a reason
// naming the last failure; until then, later deliveries wait behind it.
func TestGivenUpAfterADayDisablesTheWebhook(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, box := setup(t, clk)
	var got []string
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer rs.Close()
	w := addHook(t, db, box, rs.URL)
	for _, id := range []string{"evt_1", "evt_2"} {
		if _, err := db.EnqueueEvent(context.Background(), w.ID, &chartctl.Event{ID: id, Type: chartctl.EventPing, Time: clk.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	d := webhook.New(db, box, webhook.Options{AllowPrivate: true, RetryBase: time.Second, Now: clk.Now})
	ctx := context.Background()
	for i := 0; i < 200 && d.RunOnce(ctx) >= 0; i++ {
		clk.Add(time.Hour)
		if h, _ := db.Webhook(ctx, w.ID); !h.Active {
			break
		}
	}
	h, err := db.Webhook(ctx, w.ID)
	if err != nil || h.Active || !strings.Contains(h.DisabledReason, "HTTP 500") {
		t.Fatalf("webhook %+v %v", h, err)
	}
	for _, id := range got {
		if id != "evt_1" {
			t.Fatalf("evt_2 was sent while evt_1 was pending: %v", got)
		}
	}
	ds, err := db.Deliveries(ctx, w.ID, 0)
	if err != nil || len(ds) != 2 || ds[1].State != chartctl.DeliveryFailed || ds[0].State != chartctl.DeliveryPending || len(ds[1].Attempts) < 24 {
		t.Fatalf("deliveries %+v %v", ds, err)
	}
	// A disabled webhook gets nothing more.
	if n := d.RunOnce(ctx); n != 0 {
		t.Fatalf("sent %d to a disabled webhook", n)
	}
}

// TestBackoffFullJitter: waits stay below the doubling ceiling, capped at
// an hour.
func TestBackoffFullJitter(t *testing.T) {
	for attempt := 1; attempt < 30; attempt++ {
		ceil := min(5*time.Second<<min(attempt-1, 20), time.Hour)
		for i := 0; i < 50; i++ {
			if b := webhook.Backoff(5*time.Second, attempt); b <= 0 || b > ceil {
				t.Fatalf("attempt %d: %v not in (0, %v]", attempt, b, ceil)
			}
		}
	}
}

// TestSignMatchesTheSpecExample checks Sign against the example of the
// Standard Webhooks specification.
func TestSignMatchesTheSpecExample(t *testing.T) {
	sig, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`))
	if err != nil || sig != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("Sign = %q, %v", sig, err)
	}
}
