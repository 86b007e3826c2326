package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/testkit"
)

// A server (or the proxy in front of it) that answers 503 with a
// Retry-After over a minute is not waited for, and the wait it asked for
// is reported (CONTRACT §10), so the user knows when to try again.
func TestLongRetryAfterIsReported(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "120")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"The server is shutting down."}}`))
	}))
	defer ts.Close()
	env := map[string]string{cmdutil.EnvServer: ts.URL, cmdutil.EnvToken: "chartctl_test"}
	code, _, stderr := run(t, newFactory(t, t.TempDir(), env), "repo", "list")
	if code != ExitError {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitError, stderr)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests: a wait over a minute must not be slept through", hits.Load())
	}
	if !strings.Contains(stderr, "The server is shutting down. (HTTP 503)") || !strings.Contains(stderr, "The server asks to retry in 2m0s.") {
		t.Errorf("stderr %q: want the message and the wait the server asked for", stderr)
	}
}

// A CI secret often ends with a newline (a file mounted from a
// Kubernetes Secret, a pasted value). CHARTCTL_TOKEN or --token with
// surrounding white space works, instead of "cannot talk to SERVER:
// net/http: invalid header field value" and advice to check the address.
func TestTokenWithNewlineWorks(t *testing.T) {
	srv := testkit.StartServer(t)
	code, _, stderr := run(t, newFactory(t, t.TempDir(), map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey + "\n"}), "repo", "list")
	if code != ExitOK {
		t.Errorf("CHARTCTL_TOKEN with a newline: exit %d, %s", code, stderr)
	}
	code, _, stderr = run(t, newFactory(t, t.TempDir(), map[string]string{cmdutil.EnvServer: srv.URL}), "repo", "list", "--token", " "+srv.AdminKey+"\r\n")
	if code != ExitOK {
		t.Errorf("--token with white space: exit %d, %s", code, stderr)
	}
}
