package replication_test

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

	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/replication"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// hookReceiver is a webhook endpoint that keeps the CloudEvents it gets.
type hookReceiver struct {
	mu     sync.Mutex
	events []webhook.CloudEvent
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev webhook.CloudEvent
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, "not a CloudEvent", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) ofType(typ string) []webhook.CloudEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []webhook.CloudEvent
	for _, ev := range h.events {
		if ev.Type == webhook.TypePrefix+typ {
			out = append(out, ev)
		}
	}
	return out
}

// TestReplicationFailedEvent: a target that refuses every upload makes the
// replicator give the version up after its retries; the repository's
// webhook then receives one replication.failed naming the replication,
// the target, the chart, the version and what the target answered, and
// the status counts the version as failed.
func TestReplicationFailedEvent(t *testing.T) {
	var attempts int
	var mu sync.Mutex
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		attempts++
		mu.Unlock()
		http.Error(w, `{"error":"uploads are closed here"}`, http.StatusForbidden)
	}))
	defer target.Close()
	targetHost := strings.TrimPrefix(target.URL, "http://")
	rc := &hookReceiver{}
	hooks := httptest.NewServer(rc)
	defer hooks.Close()

	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	var d *webhook.Dispatcher
	var rep *replication.Replicator
	s := testkit.StartServer(t, func(srv *server.Server) {
		d = webhook.New(srv.Store, box, webhook.Options{RetryBase: 20 * time.Millisecond, Poll: 20 * time.Millisecond, AllowPrivate: true})
		srv.Secrets, srv.OnEvents = box, d.Notify
		srv.Config.AllowPrivateWebhooks = true
		srv.Config.AllowPrivateUpstreams = true
		srv.Config.PlainHTTPUpstreams = []string{targetHost}
		// A failed attempt is retried after a few milliseconds, and a
		// task is given up at the first attempt that fails a millisecond
		// or more after it was queued (GiveUpAfter is the task's age,
		// not a count).
		rep = replication.New(srv.App(), box, nil, replication.Options{Allow: netguard.Allowance{All: true}, PlainHTTP: []string{targetHost},
			RetryBase: time.Millisecond, GiveUpAfter: time.Millisecond, Poll: 20 * time.Millisecond})
		srv.App().WakeReplication = rep.Wake
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	go rep.Run(ctx)
	t.Cleanup(func() { cancel(); <-done })

	s.MustRepo(t, "acme", "")
	if r := s.DoJSON(t, "POST", "/v1/repositories/acme/webhooks", s.AdminKey, map[string]any{"url": hooks.URL + "/hook",
		"events": []string{"replication.failed"}}); r.StatusCode != 200 {
		t.Fatalf("create webhook: %d %s", r.StatusCode, r.Body)
	}
	replicateUpload(t, s, "to-closed", target.URL+"/helm/dest")

	deadline := time.Now().Add(60 * time.Second)
	for len(rc.ofType("replication.failed")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no replication.failed event; events %+v", rc.events)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ev := rc.ofType("replication.failed")[0]
	var data struct {
		Replication, Source, Target, Op, Chart, Version, Error string
		Attempts                                               int
		Actor                                                  struct{ Email *string }
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatalf("data %s: %v", ev.Data, err)
	}
	if data.Replication != "to-closed" || data.Source != "acme" || data.Target != target.URL+"/helm/dest" || data.Op != "push" ||
		data.Chart != "web" || data.Version != "1.2.0" || data.Attempts < 1 || data.Actor.Email != nil {
		t.Errorf("replication.failed data %s", ev.Data)
	}
	if !strings.Contains(data.Error, "403") || !strings.Contains(data.Error, "uploads are closed here") {
		t.Errorf("the error does not say what the target answered: %q", data.Error)
	}
	if !strings.HasSuffix(ev.Source, "/v1/replications/to-closed") || ev.Subject != "web/1.2.0" {
		t.Errorf("source %q subject %q", ev.Source, ev.Subject)
	}

	var st struct {
		Data struct {
			Pending, Failed int
			LastError       *string `json:"last_error"`
		}
	}
	s.DoJSON(t, "GET", "/v1/replications/to-closed/status", s.AdminKey, nil).JSON(t, &st)
	if st.Data.Failed != 1 || st.Data.Pending != 0 || st.Data.LastError == nil || !strings.Contains(*st.Data.LastError, "403") {
		t.Errorf("status %+v", st.Data)
	}
	// Given up means given up: the event is sent once, and no attempt
	// follows.
	mu.Lock()
	n := attempts
	mu.Unlock()
	if n < 1 {
		t.Errorf("the target saw %d attempts", n)
	}
	if got := rc.ofType("replication.failed"); len(got) != 1 {
		t.Errorf("%d replication.failed events", len(got))
	}
}
