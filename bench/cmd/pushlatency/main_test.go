package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// TestPushLatency pushes three versions to a real server (bbolt in a temp
// dir, the registry mounted) and checks the report names every request of
// a push, three times each, and that the versions are stored.
func TestPushLatency(t *testing.T) {
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.Register(e)
		}
	})
	ts.MustRepo(t, "apps", "private")
	var out, errs bytes.Buffer
	if code := run([]string{"--base", ts.URL, "--repo", "apps", "--user", "admin", "--password", ts.AdminKey, "--n", "3", "--start", "7"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"3 pushes in ", "| `HEAD manifest by digest` | 3 |", "| `HEAD blob` | 6 |", "| `POST upload (start)` | 6 |",
		"| `PUT upload` | 6 |", "| `PUT manifest by digest` | 3 |", "| `GET manifest by digest` | 3 |", "| `PUT manifest by tag` | 3 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	for _, v := range []string{"2.0.7", "2.0.8", "2.0.9"} {
		if r := ts.Do(t, "GET", "/v1/repositories/apps/charts/web/"+v, ts.AdminKey, nil); r.StatusCode != 200 {
			t.Errorf("version %s after the pushes: %d %s", v, r.StatusCode, r.Body)
		}
	}

	// Pushing to a repository that does not exist fails with the reason.
	out.Reset()
	errs.Reset()
	if code := run([]string{"--base", ts.URL, "--repo", "nowhere", "--user", "admin", "--password", ts.AdminKey, "--n", "1"}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "push web 2.0.0") {
		t.Fatalf("push to a missing repository: exit %d, %q", code, errs.String())
	}
	if code := run([]string{"--repo", "apps"}, &out, &errs); code != 2 {
		t.Fatalf("without --base: exit %d", code)
	}
}
