package app_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestIndexSnapshotAcrossRestart: an App started again over the same
// store and index cache directory serves the repository's index as the
// previous one did, from what that one kept on disk; once another replica
// (or this one) has changed the repository, a restart serves the change,
// never the kept index. On both stores.
func TestIndexSnapshotAcrossRestart(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			replica := e.open(t)
			cacheDir := filepath.Join(t.TempDir(), "index-cache")
			var started []*app.App
			start := func() *app.App {
				// The replicas started before stop: their snapshot
				// writes finish, as Server.Close waits for them.
				for _, a := range started {
					a.Index.Flush()
				}
				db, blobs := replica(t)
				a := app.New(db, blobs, app.Options{Config: app.Config{IndexCacheDir: cacheDir, MaxChartSize: 1 << 20}})
				started = append(started, a)
				return a
			}
			a := start()
			r := mustRepo(t, a, "big")
			// Enough versions, with descriptions that do not compress,
			// for a gzip form past helmindex.DiskMin.
			rng := rand.New(rand.NewPCG(3, 4))
			t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for i := range 400 {
				var desc []byte
				for range 32 {
					desc = fmt.Appendf(desc, "%016x", rng.Uint64())
				}
				cv := &chartctl.ChartVersion{Repository: "big", Name: fmt.Sprintf("c%d", i%4), Version: fmt.Sprintf("1.%d.0", i),
					Digest: fmt.Sprintf("sha256:%064x", i), Size: 10, CreatedAt: t0.Add(time.Duration(i) * time.Second),
					Metadata: []byte(fmt.Sprintf(`{"apiVersion":"v2","name":"c%d","version":"1.%d.0","description":"%s"}`, i%4, i, desc))}
				cv.IndexEntry = helmindex.RenderEntry(cv)
				if _, _, _, err := a.Store.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			view := func(a *app.App) *helmindex.Index {
				t.Helper()
				ix, err := a.Index.View(ctx, "big", helmindex.Query{Format: helmindex.JSON})
				if err != nil {
					t.Fatal(err)
				}
				if ix.GzipFile() == "" {
					t.Fatalf("the index's gzip form (%d bytes) is not on disk", len(ix.Gzip()))
				}
				return ix
			}
			first := view(a)
			a.Index.Flush()
			snaps, _ := filepath.Glob(filepath.Join(cacheDir, "*.snap"))
			if len(snaps) != 1 {
				t.Fatalf("sidecars after the first load: %v", snaps)
			}

			// A restart: the same bytes, answered from the kept file.
			a = start()
			again := view(a)
			if again.ETag != first.ETag || !bytes.Equal(again.Body, first.Body) || again.GzipFile() != first.GzipFile() {
				t.Fatalf("after a restart: ETag %s, file %s; before: %s, %s", again.ETag, again.GzipFile(), first.ETag, first.GzipFile())
			}

			// Another replica adds a version: this one, started again,
			// lists it.
			other := start()
			if _, err := push(t, other, r, testkit.MakeChart(t, testkit.Chart{Name: "c1", Version: "9.0.0"})); err != nil {
				t.Fatal(err)
			}
			a = start()
			if ix := view(a); !bytes.Contains(ix.Body, []byte(`"9.0.0"`)) {
				t.Fatal("a restart after another replica's upload serves the kept index without it")
			}
			// This replica deletes it, and serves the change at once
			// and after a restart.
			if _, err := a.DeleteChart(ctx, r, "c1", "9.0.0"); err != nil {
				t.Fatal(err)
			}
			if ix := view(a); bytes.Contains(ix.Body, []byte(`"9.0.0"`)) {
				t.Fatal("the deleted version is still listed")
			}
			a = start()
			if ix := view(a); bytes.Contains(ix.Body, []byte(`"9.0.0"`)) || ix.ETag != first.ETag {
				t.Fatalf("after the delete and a restart: ETag %s, want the first one %s", ix.ETag, first.ETag)
			}
			if _, err := os.Stat(first.GzipFile()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
