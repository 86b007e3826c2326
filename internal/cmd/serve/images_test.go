package serve_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/servetest"
)

// TestServeFindsImagesWithTheChild runs `chartctl serve` as it is
// deployed, chartctl-lint on PATH: the images of a chart without the
// annotation are found by the real bounded child after the push, a chart
// that needs a cluster is unrenderable with the reason (its version still
// answered), and a diff carries rendered manifests.
func TestServeFindsImagesWithTheChild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds chartctl-lint")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "chartctl-lint"), "github.com/chartctl/chartctl/cmd/chartctl-lint")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build chartctl-lint: %v", err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	url, key := servetest.Start(t)
	c, err := client.New(url, client.WithToken(key))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "apps", Visibility: "public"}); err != nil {
		t.Fatal(err)
	}
	const fixtures = "../../chartdiff/testdata/"
	for _, dir := range []string{"api-1.0.0/api", "api-1.1.0/api", "needs-cluster/needs-cluster"} {
		if _, _, err := c.Charts.Upload(ctx, "apps", bytes.NewReader(testkit.ArchiveDir(t, fixtures+dir)), nil); err != nil {
			t.Fatalf("upload %s: %v", dir, err)
		}
	}
	// The job runs in the background: wait for its outcome (this is
	// not a bound on its speed; the deadline only ends a hung test).
	wait := func(name, version string) *client.Chart {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			ch, _, err := c.Charts.Get(ctx, "apps", name, version)
			if err != nil {
				t.Fatal(err)
			}
			if ch.ImagesSource != "pending" {
				return ch
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s still pending", name, version)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	api := wait("api", "1.0.0")
	if api.ImagesSource != "rendered" || strings.Join(api.Images, " ") != "docker.io/library/busybox:1.36 ghcr.io/acme/api-migrate:2.4.1 ghcr.io/acme/api:2.4.1" {
		t.Fatalf("api: %q from %q (%s)", api.Images, api.ImagesSource, api.ImagesError)
	}
	nc := wait("needs-cluster", "0.1.0")
	if nc.ImagesSource != "unrenderable" || !strings.Contains(nc.ImagesError, "lookup") {
		t.Fatalf("needs-cluster: %+v", nc)
	}
	d, _, err := c.Charts.Diff(ctx, "apps", "api", "1.0.0", "1.1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, f := range d.Files {
		if strings.HasPrefix(f.Path, "rendered/") {
			rendered = append(rendered, f.Path)
		}
	}
	if strings.Join(rendered, " ") != "rendered/templates/deployment.yaml" || d.RenderedError != "" {
		t.Fatalf("rendered entries %q (%s)", rendered, d.RenderedError)
	}
}
