package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/webhook"
)

// recorder is a webhook receiver that records the webhook-id of each
// request it answered, in order; with hold set, it answers only once
// release is closed (a slow receiver, without a timed sleep).
type recorder struct {
	mu       sync.Mutex
	got      []string
	inFlight int
	changed  chan struct{}
	hold     bool
	release  chan struct{}
}

func newRecorder(t *testing.T, hold bool) (*recorder, *httptest.Server) {
	rc := &recorder{changed: make(chan struct{}, 1), hold: hold, release: make(chan struct{})}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	t.Cleanup(rc.releaseAll)
	return rc, srv
}

func (rc *recorder) releaseAll() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	select {
	case <-rc.release:
	default:
		close(rc.release)
	}
}

func (rc *recorder) notify() {
	select {
	case rc.changed <- struct{}{}:
	default:
	}
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.inFlight++
	rc.mu.Unlock()
	rc.notify()
	if rc.hold {
		select {
		case <-rc.release:
		case <-r.Context().Done():
		}
	}
	rc.mu.Lock()
	rc.inFlight--
	if r.Context().Err() == nil {
		rc.got = append(rc.got, r.Header.Get("webhook-id"))
	}
	rc.mu.Unlock()
	rc.notify()
	w.WriteHeader(http.StatusNoContent)
}

// state returns what the receiver answered and how many requests it is
// holding.
func (rc *recorder) state() ([]string, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...), rc.inFlight
}

// waitUntil waits until cond holds of the receiver's state; the deadline
// only keeps a broken dispatcher from hanging the test.
func (rc *recorder) waitUntil(t *testing.T, what string, cond func(got []string, inFlight int) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got, n := rc.state()
		if cond(got, n) {
			return
		}
		select {
		case <-rc.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: still %v answered, %d in flight", what, got, n)
		}
	}
}

func enqueue(t *testing.T, db interface {
	EnqueueEvent(context.Context, string, *chartctl.Event) (*chartctl.Delivery, error)
}, hook *chartctl.Webhook, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := db.EnqueueEvent(context.Background(), hook.ID, &chartctl.Event{ID: id, Type: chartctl.EventPing, Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}

// Regression (issue 27, N9): one slow receiver delayed every tenant's
// deliveries, because the dispatcher sent in rounds and a round ended
// with its slowest webhook. While a slow receiver holds a delivery, a
// fast webhook's later events all arrive; the slow webhook's own events
// wait behind its held one and then arrive in order.
func TestSlowWebhookDelaysOnlyItsOwnQueue(t *testing.T) {
	clk := &clock{t: time.Now()}
	db, box := setup(t, clk)
	slow, slowRS := newRecorder(t, true)
	fast, fastRS := newRecorder(t, false)
	slowHook := addHook(t, db, box, slowRS.URL)
	fastHook := addHook(t, db, box, fastRS.URL)
	d := webhook.New(db, box, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	enqueue(t, db, slowHook, "evt_slow_1", "evt_slow_2")
	d.Notify()
	slow.waitUntil(t, "the slow receiver holds its first delivery", func(_ []string, n int) bool { return n == 1 })

	var want []string
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("evt_fast_%d", i)
		want = append(want, id)
		enqueue(t, db, fastHook, id)
		d.Notify()
	}
	fast.waitUntil(t, "the fast receiver gets its events while the slow one holds", func(got []string, _ int) bool { return len(got) == len(want) })
	if got, _ := fast.state(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fast receiver got %v, want %v in order", got, want)
	}
	if got, n := slow.state(); len(got) != 0 || n != 1 {
		t.Fatalf("the slow receiver answered %v with %d in flight before it was released", got, n)
	}

	slow.releaseAll()
	slow.waitUntil(t, "the slow receiver gets its events", func(got []string, _ int) bool { return len(got) == 2 })
	if got, _ := slow.state(); fmt.Sprint(got) != "[evt_slow_1 evt_slow_2]" {
		t.Fatalf("slow receiver got %v, want its events in order", got)
	}
}

// TestPerHostCap: webhooks of one receiving host share PerHost workers;
// another host's webhook is sent to meanwhile.
func TestPerHostCap(t *testing.T) {
	clk := &clock{t: time.Now()}
	db, box := setup(t, clk)
	held, heldRS := newRecorder(t, true)
	other, otherRS := newRecorder(t, false)
	// Three webhooks of one host (127.0.0.1), capped at two at once; the
	// other receiver is reached by another host name (localhost).
	var hooks []*chartctl.Webhook
	for i := 0; i < 3; i++ {
		hooks = append(hooks, addHook(t, db, box, fmt.Sprintf("%s/hook%d", heldRS.URL, i)))
	}
	otherHook := addHook(t, db, box, replaceHost(otherRS.URL, "localhost"))
	d := webhook.New(db, box, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond, Timeout: time.Minute, PerHost: 2, Now: clk.Now})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for i, h := range hooks {
		enqueue(t, db, h, fmt.Sprintf("evt_held_%d", i))
	}
	enqueue(t, db, otherHook, "evt_other")
	d.Notify()
	other.waitUntil(t, "the other host's webhook is sent to", func(got []string, _ int) bool { return len(got) == 1 })
	held.waitUntil(t, "two of the host's webhooks are in flight", func(_ []string, n int) bool { return n == 2 })
	if _, n := held.state(); n != 2 {
		t.Fatalf("%d deliveries in flight to one host, want the cap of 2", n)
	}
	held.releaseAll()
	held.waitUntil(t, "every webhook of the host gets its event", func(got []string, _ int) bool { return len(got) == 3 })
}

func replaceHost(rawURL, host string) string {
	// httptest URLs are http://127.0.0.1:PORT.
	return "http://" + host + rawURL[len("http://127.0.0.1"):]
}
