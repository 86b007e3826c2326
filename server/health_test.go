package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

func TestProbes(t *testing.T) {
	s := testkit.StartServer(t)
	for _, path := range []string{"/livez", "/healthz", "/readyz"} {
		r := s.Do(t, "GET", path, "", nil)
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, r.StatusCode, r.Body)
		}
		var body map[string]string
		if err := json.Unmarshal(r.Body, &body); err != nil || body["status"] != "ok" {
			t.Errorf("%s body = %s", path, r.Body)
		}
	}
}

func TestReadyzNamesFailingPart(t *testing.T) {
	s := testkit.StartServer(t)
	notReady := func(part string) {
		t.Helper()
		r := s.Do(t, "GET", "/readyz", "", nil)
		var e errBody
		if r.StatusCode != 503 || json.Unmarshal(r.Body, &e) != nil || e.Error.Code != "unavailable" || !strings.Contains(e.Error.Message, part) {
			t.Fatalf("readyz = %d %s, want 503 unavailable naming %q", r.StatusCode, r.Body, part)
		}
		if r := s.Do(t, "GET", "/livez", "", nil); r.StatusCode != 200 {
			t.Errorf("livez = %d while not ready: liveness must not depend on storage", r.StatusCode)
		}
	}

	// The blob store's directory disappears (an unmounted volume).
	blobs := filepath.Join(s.Dir, "blobs")
	if err := os.Rename(blobs, blobs+".away"); err != nil {
		t.Fatal(err)
	}
	notReady("blob store")
	if err := os.Rename(blobs+".away", blobs); err != nil {
		t.Fatal(err)
	}
	if r := s.Do(t, "GET", "/readyz", "", nil); r.StatusCode != 200 {
		t.Fatalf("readyz after the blob store came back = %d %s", r.StatusCode, r.Body)
	}

	// The metadata store stops answering.
	if err := s.Store.Close(); err != nil {
		t.Fatal(err)
	}
	notReady("metadata store")
}

// hangingStore is a metadata store whose Ping never returns until release
// is closed, whatever its context says (a wedged driver).
type hangingStore struct {
	chartctl.Store
	release chan struct{}
}

func (h hangingStore) Ping(context.Context) error {
	<-h.release
	return nil
}

// hangingS3 starts an S3 endpoint that answers the bucket check s3blob
// makes when it opens, then accepts every later request and never answers
// it until the test ends.
func hangingS3(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	var answered atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answered.CompareAndSwap(false, true) {
			w.WriteHeader(http.StatusOK)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return "s3://charts?endpoint=" + srv.URL + "&region=us-east-1&path_style=true"
}

// With the blob store's S3 endpoint hanging and the metadata store wedged
// (its Ping ignores its deadline), /readyz still answers 503 (each check
// is bounded and they run at once) and names both parts; a probe while
// the wedged check still runs says so instead of starting another.
func TestReadyzBoundsHangingDependencies(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	blobs, err := s3blob.Open(context.Background(), hangingS3(t))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Store = hangingStore{Store: srv.Store, release: release}
		srv.Blobs = blobs
	})
	for _, want := range []string{
		"Not ready: the metadata store did not answer within 1s; the blob store did not answer within 1s.",
		"Not ready: the metadata store has not answered an earlier check yet; the blob store did not answer within 1s.",
	} {
		r := s.Do(t, "GET", "/readyz", "", nil)
		var e errBody
		if r.StatusCode != 503 || json.Unmarshal(r.Body, &e) != nil || e.Error.Code != "unavailable" || e.Error.Message != want {
			t.Fatalf("readyz = %d %s, want 503 unavailable %q", r.StatusCode, r.Body, want)
		}
	}
}
