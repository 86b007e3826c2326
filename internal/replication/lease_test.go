package replication_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/replication"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// TestClaimRenewedWhileCopying: two replicators on one store (two
// replicas) with a lease of 300 ms; the target takes 1.5 s to answer the
// copy. The claim is renewed while the copy runs, so the other replicator
// does not start the same copy when the lease would have lapsed; and once
// the first has recorded the failure, the task waits for its retry.
func TestClaimRenewedWhileCopying(t *testing.T) {
	var requests atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		time.Sleep(1500 * time.Millisecond)
		http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
	}))
	defer target.Close()
	targetHost := strings.TrimPrefix(target.URL, "http://")
	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	var reps [2]*replication.Replicator
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Secrets = box
		srv.Config.AllowPrivateUpstreams = true
		srv.Config.PlainHTTPUpstreams = []string{targetHost}
		for i := range reps {
			// A failed copy is retried after an hour: any second request
			// to the target is a claim taken while the first ran.
			reps[i] = replication.New(srv.App(), box, nil, replication.Options{Allow: netguard.Allowance{All: true}, PlainHTTP: []string{targetHost},
				RetryBase: time.Hour, Poll: 20 * time.Millisecond, Lease: 300 * time.Millisecond})
		}
		srv.App().WakeReplication = func() { reps[0].Wake(); reps[1].Wake() }
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, rep := range reps {
		go rep.Run(ctx)
	}
	s.MustRepo(t, "acme", "")
	replicateUpload(t, s, "slow", target.URL+"/helm/dest")
	deadline := time.Now().Add(30 * time.Second)
	for requests.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the copy never reached the target")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Past the copy (1.5 s, five leases) and a few leases more.
	time.Sleep(2500 * time.Millisecond)
	if n := requests.Load(); n != 1 {
		t.Fatalf("the target got %d copies of the one task; want 1 (the claim lapsed while the copy ran)", n)
	}
}

// replicateUpload creates replication name from repository acme to
// target, then uploads web 1.2.0 to acme, which queues its copy.
func replicateUpload(t *testing.T, s *testkit.Server, name, target string) {
	t.Helper()
	if r := s.DoJSON(t, "POST", "/v1/replications", s.AdminKey, map[string]any{"name": name, "source": "acme",
		"target": target}); r.StatusCode != 200 {
		t.Fatalf("create replication: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Upload(t, "acme", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
}
