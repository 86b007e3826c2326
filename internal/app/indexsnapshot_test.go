package app_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
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
			fillPastDiskMin(t, a, "big")
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

// fillPastDiskMin stores enough versions in repo, with descriptions that
// do not compress, for an index whose gzip form passes helmindex.DiskMin.
// They go to the store directly: no App is told of them.
func fillPastDiskMin(t *testing.T, a *app.App, repo string) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 400 {
		var desc []byte
		for range 32 {
			desc = fmt.Appendf(desc, "%016x", rng.Uint64())
		}
		cv := &chartctl.ChartVersion{Repository: repo, Name: fmt.Sprintf("c%d", i%4), Version: fmt.Sprintf("1.%d.0", i),
			Digest: fmt.Sprintf("sha256:%064x", i), Size: 10, CreatedAt: t0.Add(time.Duration(i) * time.Second),
			Metadata: []byte(fmt.Sprintf(`{"apiVersion":"v2","name":"c%d","version":"1.%d.0","description":"%s"}`, i%4, i, desc))}
		cv.IndexEntry = helmindex.RenderEntry(cv)
		if _, _, _, err := a.Store.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// loadCounting counts the loads of whole repositories' index entries.
type loadCounting struct {
	chartctl.Store
	loads atomic.Int32
}

func (s *loadCounting) IndexEntries(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
	s.loads.Add(1)
	return s.Store.IndexEntries(ctx, repo)
}

// TestIndexKeeper: the index keeper writes the snapshot of a repository
// whose index nobody asked for, once its changes pause, and again when it
// stops after a change; each time the next App answers the first request
// from it, with the change, without loading the repository. On both
// stores.
func TestIndexKeeper(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			replica := e.open(t)
			cacheDir := filepath.Join(t.TempDir(), "index-cache")
			start := func(quiet time.Duration) (*app.App, *loadCounting, func()) {
				db, blobs := replica(t)
				counting := &loadCounting{Store: db}
				a := app.New(counting, blobs, app.Options{Config: app.Config{IndexCacheDir: cacheDir, MaxChartSize: 1 << 20, IndexKeepQuiet: quiet}})
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					a.RunIndexKeeper(stop)
					close(done)
				}()
				return a, counting, func() {
					close(stop)
					<-done
					a.Index.Flush()
				}
			}
			firstIndex := func(version string) {
				t.Helper()
				a, counting, stop := start(time.Hour)
				defer stop()
				ix, err := a.Index.View(ctx, "big", helmindex.Query{Format: helmindex.JSON})
				if err != nil {
					t.Fatal(err)
				}
				if n := counting.loads.Load(); n != 0 {
					t.Fatalf("the first index after a restart loaded the repository (%d loads) instead of the kept snapshot", n)
				}
				if !bytes.Contains(ix.Body, []byte(`"`+version+`"`)) {
					t.Fatalf("the kept index does not list %s", version)
				}
			}

			a, _, stop := start(10 * time.Millisecond)
			r := mustRepo(t, a, "big")
			fillPastDiskMin(t, a, "big")
			if _, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "c1", Version: "9.0.0"})); err != nil {
				t.Fatal(err)
			}
			// Kept once the changes pause, while the App runs.
			for deadline := time.Now().Add(30 * time.Second); len(snapshotsIn(t, cacheDir)) == 0; {
				if time.Now().After(deadline) {
					t.Fatal("no index snapshot written 30 s after the last change")
				}
				time.Sleep(10 * time.Millisecond)
			}
			stop()
			firstIndex("9.0.0")

			// A change just before the App stops: kept as it stops.
			a, _, stop = start(time.Hour)
			if _, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "c2", Version: "9.1.0"})); err != nil {
				t.Fatal(err)
			}
			stop()
			firstIndex("9.1.0")
		})
	}
}

// snapshotsIn lists the sidecars in dir.
func snapshotsIn(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
