package run

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/replication"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// setupRun starts a real server whose replicator runs, with repository
// acme holding two versions and a replication of it to target (a
// chartctl URL reached over plain http).
func setupRun(t *testing.T, target func(self string) string) (*testkit.Server, func() (*client.Client, error)) {
	t.Helper()
	ln := testkit.Listen(t)
	to := target(ln.Addr().String())
	host := strings.Split(strings.TrimPrefix(to, "http://"), "/")[0]
	var rep *replication.Replicator
	s := testkit.StartServerOn(t, ln, func(srv *server.Server) {
		srv.Config.AllowPrivateUpstreams = true
		srv.Config.PlainHTTPUpstreams = []string{host}
		rep = replication.New(srv.App(), srv.Secrets, nil, replication.Options{Allow: netguard.Allowance{All: true}, PlainHTTP: []string{host},
			Poll: 20 * time.Millisecond, RetryBase: time.Hour})
		srv.App().WakeReplication = rep.Wake
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rep.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	s.MustRepo(t, "acme", "")
	s.MustRepo(t, "copy", "")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if r := s.Upload(t, "acme", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: v}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	if r := s.DoJSON(t, "POST", "/v1/replications", s.AdminKey, map[string]any{"name": "dr", "source": "acme", "target": to,
		"username": "admin", "password": s.AdminKey}); r.StatusCode != 200 {
		t.Fatalf("create replication: %d %s", r.StatusCode, r.Body)
	}
	return s, func() (*client.Client, error) { return client.New(s.URL, client.WithToken(s.AdminKey)) }
}

// ttyStreams are streams whose standard output and error are terminals.
func ttyStreams() (*iostreams.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetStderrTTY(true)
	return ios, out, errOut
}

// TestRunShowsProgressOnTerminal: on a terminal, run waits for the copies
// and draws their progress on standard error, in place, then says what
// it copied.
func TestRunShowsProgressOnTerminal(t *testing.T) {
	s, mk := setupRun(t, func(self string) string { return "http://" + self + "/helm/copy" })
	ios, out, errOut := ttyStreams()
	opts := &RunOptions{IO: ios, Client: mk, Name: "dr", Wait: true, Timeout: time.Minute, Poll: 10 * time.Millisecond}
	if err := runRun(t.Context(), opts); err != nil {
		t.Fatalf("run: %v (stderr %q)", err, errOut.String())
	}
	if !strings.Contains(out.String(), "Copied 2 versions of acme to http://") {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(errOut.String(), "Copying acme to http://") || !strings.Contains(errOut.String(), " of 2 done") ||
		!strings.Contains(errOut.String(), "\r\x1b[K") {
		t.Errorf("no progress drawn on the terminal: %q", errOut.String())
	}
	if r := s.Do(t, "GET", "/helm/copy/charts/web-1.1.0.tgz", s.AdminKey, nil); r.StatusCode != 200 {
		t.Errorf("the copy is not at the target: %d", r.StatusCode)
	}
}

// TestRunStopsWaitingOnFailure: a target that refuses ends the wait with
// what it answered and where to look next, instead of waiting through a
// day of retries.
func TestRunStopsWaitingOnFailure(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "quota exhausted", http.StatusInsufficientStorage)
	}))
	t.Cleanup(refusing.Close)
	_, mk := setupRun(t, func(string) string { return refusing.URL + "/helm/copy" })
	ios, _, errOut := ttyStreams()
	opts := &RunOptions{IO: ios, Client: mk, Name: "dr", Wait: true, Timeout: time.Minute, Poll: 10 * time.Millisecond}
	err := runRun(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "507") || !strings.Contains(err.Error(), "quota exhausted") ||
		!strings.Contains(err.Error(), "chartctl replication status dr") {
		t.Fatalf("run against a refusing target: %v (stderr %q)", err, errOut.String())
	}
}
