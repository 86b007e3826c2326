package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
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
