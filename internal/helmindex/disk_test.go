package helmindex

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// bigRepo returns n versions whose descriptions do not compress, so the
// index's gzip form passes DiskMin.
func bigRepo(tb testing.TB, n int) []*chartctl.ChartVersion {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	cvs := make([]*chartctl.ChartVersion, n)
	for i := range cvs {
		md := &chart.Metadata{APIVersion: "v2", Description: fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())}
		cvs[i] = mkCV(tb, md, fmt.Sprintf("chart-%d", i%20), fmt.Sprintf("1.%d.0", i/20), t0.Add(time.Duration(i)*time.Second))
	}
	return cvs
}

func TestGzipFileOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index-cache")
	// What a previous process left goes at start.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "sha256-stale.gz")
	if err := os.WriteFile(stale, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	cvs := bigRepo(t, 2000)
	l := &staticLoader{cvs: cvs}
	c := New(l.load, Options{LoadVersion: l.loadVersion, DiskDir: dir})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a previous process's file is still there: %v", err)
	}
	ctx := context.Background()

	for _, f := range []Format{YAML, JSON} {
		ix, err := c.View(ctx, "r", Query{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		path := ix.GzipFile()
		if path == "" {
			t.Fatalf("format %d: the gzip form (%d bytes) is not on disk", f, len(ix.Gzip()))
		}
		if len(ix.Gzip()) < DiskMin {
			t.Fatalf("format %d: gzip form %d bytes, under DiskMin: make the test repository bigger", f, len(ix.Gzip()))
		}
		onDisk, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(onDisk, ix.Gzip()) {
			t.Fatalf("format %d: the file does not hold the gzip form (%d bytes, %v)", f, len(onDisk), err)
		}
		if filepath.Dir(path) != dir || filepath.Base(path) != ix.ETag[1:len(ix.ETag)-1]+".gz" {
			t.Errorf("format %d: file %s, want %s/<ETag>.gz", f, path, dir)
		}
	}

	// A small view (one chart's index) stays in memory.
	small, err := c.View(ctx, "r", Query{Chart: "chart-3", Latest: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Gzip()) < DiskMin && small.GzipFile() != "" {
		t.Errorf("a %d-byte gzip form went to disk", len(small.Gzip()))
	}

	// Another cache over the same bytes (a replica, or a restart) writes
	// the same file name with the same bytes.
	old := mustGet(t, c)
	oldPath, oldGzip := old.GzipFile(), bytes.Clone(old.Gzip())
	other := New((&staticLoader{cvs: cvs}).load, Options{DiskDir: filepath.Join(t.TempDir(), "replica")})
	if rep := mustGet(t, other); filepath.Base(rep.GzipFile()) != filepath.Base(oldPath) || !bytes.Equal(rep.Gzip(), oldGzip) {
		t.Errorf("a second cache over the same versions wrote %s, want %s with the same bytes", rep.GzipFile(), oldPath)
	}

	// A change makes a new file; the old one goes once no Index names it.
	added := mkCV(t, nil, "chart-1", "9.9.9", t0.Add(time.Hour))
	l.set(append(cvs, added)...)
	c.Refresh(ctx, "r", "chart-1", "9.9.9")
	now := mustGet(t, c)
	if now.ETag == old.ETag || now.GzipFile() == oldPath || now.GzipFile() == "" {
		t.Fatalf("after a change: ETag %s (was %s), file %s (was %s)", now.ETag, old.ETag, now.GzipFile(), oldPath)
	}
	if _, err := os.Stat(oldPath); err != nil {
		t.Fatalf("the old file went while an Index still names it: %v", err)
	}
	old = nil
	// The JSON view of the old state is gone from the cache too; let the
	// collector find both and run their cleanups.
	for i := 0; i < 100; i++ {
		runtime.GC()
		if _, err := os.Stat(oldPath); os.IsNotExist(err) {
			break
		}
		// Cleanups run on their own goroutine after the collection.
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(oldPath); !os.IsNotExist(err) {
		t.Errorf("the superseded file %s is still there after 100 collections: %v", oldPath, err)
	}
	if _, err := os.Stat(now.GzipFile()); err != nil {
		t.Errorf("the current file went: %v", err)
	}
	runtime.KeepAlive(now)
}
