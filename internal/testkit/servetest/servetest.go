// Package servetest runs the serve command's composition — the whole
// server as `chartctl serve` assembles it, the OCI registry included — in
// the test's process, for tests of packages that talk to a real chartctl
// (the importer, the server's own Helm chart). It is a package of its own
// because testkit cannot import internal/cmd/serve, whose tests import
// testkit.
package servetest

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/chartctl/chartctl/internal/cmd/serve"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// Start runs a chartctl server with its defaults on loopback, on a data
// directory of its own and without rate limits, until the test ends; it
// returns the server's URL and its first admin's API key.
func Start(t testing.TB) (url, key string) {
	t.Helper()
	cfg := serve.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Data = t.TempDir()
	cfg.RateLimitGlobal, cfg.RateLimitUpload, cfg.RateLimitSearch = ratelimit.Limit{}, ratelimit.Limit{}, ratelimit.Limit{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, &serve.Options{Config: cfg, Stderr: io.Discard, Ready: func(u string) { ready <- u }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("chartctl did not start: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Data, serve.InitialAdminFile))
	if err != nil {
		t.Fatal(err)
	}
	var admin serve.InitialAdmin
	if err := json.Unmarshal(b, &admin); err != nil {
		t.Fatal(err)
	}
	return url, admin.APIKey
}
