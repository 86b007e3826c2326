package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/webhook"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestReplicasSlowWebhookDeliveredOnceInOrder: two dispatchers on one
// real PostgreSQL database (two replicas). While a slow receiver holds its
// webhook's first delivery, neither replica sends that webhook anything
// else, and the fast webhook gets all its events, once each and in order;
// released, the slow webhook gets the rest, once each and in order.
func TestReplicasSlowWebhookDeliveredOnceInOrder(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	box, err := secrets.New(bytes.Repeat([]byte("x"), 40))
	if err != nil {
		t.Fatal(err)
	}
	var stores []*postgres.DB
	for i := 0; i < 2; i++ {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		stores = append(stores, db)
	}
	hook := func(u string) *chartctl.Webhook {
		sealed, err := box.Seal([]byte(webhook.NewSecret()))
		if err != nil {
			t.Fatal(err)
		}
		w := &chartctl.Webhook{URL: u, Events: []string{"*"}, Active: true, Secret: sealed}
		if err := stores[0].CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	slow, slowRS := newRecorder(t, true)
	fast, fastRS := newRecorder(t, false)
	slowHook, fastHook := hook(slowRS.URL), hook(fastRS.URL)

	var ds []*webhook.Dispatcher
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, len(stores))
	for _, db := range stores {
		d := webhook.New(db, box, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond, Timeout: time.Minute})
		ds = append(ds, d)
		go func() { d.Run(runCtx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		cancel()
		for range ds {
			<-done
		}
	})
	notify := func() {
		for _, d := range ds {
			d.Notify()
		}
	}

	enqueue(t, stores[0], slowHook, "evt_slow_1", "evt_slow_2", "evt_slow_3")
	notify()
	slow.waitUntil(t, "the slow receiver holds its first delivery", func(_ []string, n int) bool { return n == 1 })
	var want []string
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("evt_fast_%d", i)
		want = append(want, id)
		enqueue(t, stores[i%2], fastHook, id)
		notify()
	}
	fast.waitUntil(t, "the fast receiver gets its events while the slow one holds", func(got []string, _ int) bool { return len(got) >= len(want) })
	if got, _ := fast.state(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fast receiver got %v, want %v once each, in order", got, want)
	}
	if got, n := slow.state(); len(got) != 0 || n != 1 {
		t.Fatalf("while its first delivery was held, the slow receiver answered %v and holds %d", got, n)
	}
	slow.releaseAll()
	slow.waitUntil(t, "the slow receiver gets its events", func(got []string, _ int) bool { return len(got) >= 3 })
	if got, _ := slow.state(); fmt.Sprint(got) != "[evt_slow_1 evt_slow_2 evt_slow_3]" {
		t.Fatalf("slow receiver got %v, want its events once each, in order", got)
	}
	// Every delivery ends delivered, with one attempt.
	for _, h := range []*chartctl.Webhook{slowHook, fastHook} {
		var dls []*chartctl.Delivery
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if dls, err = stores[1].Deliveries(ctx, h.ID, 0); err != nil {
				t.Fatal(err)
			}
			pending := false
			for _, dl := range dls {
				pending = pending || dl.State != chartctl.DeliveryDelivered
			}
			if !pending || time.Now().After(deadline) {
				break
			}
		}
		for _, dl := range dls {
			if dl.State != chartctl.DeliveryDelivered || len(dl.Attempts) != 1 {
				t.Fatalf("delivery %s of %s: %s after %d attempts", dl.Event.ID, h.URL, dl.State, len(dl.Attempts))
			}
		}
	}
}
