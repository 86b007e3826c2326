package helmindex

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// generations stands in for the store's IndexGeneration.
type generations struct {
	mu sync.Mutex
	g  string
}

func (s *generations) get(context.Context, string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g, nil
}

func (s *generations) set(g string) {
	s.mu.Lock()
	s.g = g
	s.mu.Unlock()
}

// sidecars lists the snapshot sidecars in dir.
func sidecars(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+snapshotSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSnapshotAcrossRestart: a new Cache over the same directory (a
// restart) answers a whole-repository view from its snapshot, without a
// load, while the store's generation is the one the snapshot shows; a
// change, another generation, a damaged file or no generation at all
// make it load.
func TestSnapshotAcrossRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index-cache")
	ctx := context.Background()
	cvs := bigRepo(t, 2000)
	gens := &generations{g: "repo-1:a"}
	var c *Cache
	open := func() (*Cache, *staticLoader) {
		if c != nil {
			// The previous process stops: its snapshot writes finish.
			c.Flush()
		}
		l := &staticLoader{cvs: cvs}
		return New(l.load, Options{LoadVersion: l.loadVersion, DiskDir: dir, Generation: gens.get}), l
	}
	views := []Query{{Format: JSON}, {Format: YAML}, {Format: JSON, Latest: 60}}

	c, _ = open()
	first := map[Query]*Index{}
	for _, q := range views {
		ix, err := c.View(ctx, "r", q)
		if err != nil {
			t.Fatal(err)
		}
		if ix.GzipFile() == "" {
			t.Fatalf("%+v: not on disk", q)
		}
		first[q] = ix
	}
	c.Flush()
	if n := len(sidecars(t, dir)); n != len(views) {
		t.Fatalf("%d sidecars, want one per view (%d)", n, len(views))
	}

	// A restart: every view from its snapshot, the same bytes, no load.
	c, l := open()
	for _, q := range views {
		ix, err := c.View(ctx, "r", q)
		if err != nil {
			t.Fatal(err)
		}
		want := first[q]
		if ix.ETag != want.ETag || !bytes.Equal(ix.Body, want.Body) || !bytes.Equal(ix.Gzip(), want.Gzip()) ||
			!ix.Generated.Equal(want.Generated) || ix.TypeHeader[0] != want.TypeHeader[0] || ix.GzipLengthHeader()[0] != want.GzipLengthHeader()[0] {
			t.Fatalf("%+v from the snapshot differs from what was served before the restart", q)
		}
		if onDisk, err := os.ReadFile(ix.GzipFile()); err != nil || !bytes.Equal(onDisk, want.Gzip()) {
			t.Fatalf("%+v: its file does not hold its gzip form: %v", q, err)
		}
	}
	if n := l.calls.Load(); n != 0 {
		t.Fatalf("the restart loaded the repository %d times", n)
	}
	// A view no snapshot describes (one chart's) loads.
	if _, err := c.View(ctx, "r", Query{Chart: "chart-3"}); err != nil {
		t.Fatal(err)
	}
	if n := l.calls.Load(); n != 1 {
		t.Fatalf("a per-chart view: %d loads, want 1", n)
	}

	// A change after a restart: the snapshot's views go, the next
	// request shows the change, and the views rendered from the next
	// load describe the new generation.
	c, l = open()
	if _, err := c.View(ctx, "r", Query{Format: JSON}); err != nil {
		t.Fatal(err)
	}
	added := mkCV(t, nil, "chart-1", "9.9.9", t0.Add(time.Hour))
	cvs = append(cvs, added)
	l.set(cvs...)
	gens.set("repo-1:b")
	c.Refresh(ctx, "r", "chart-1", "9.9.9")
	ix, err := c.View(ctx, "r", Query{Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ix.Body, []byte(`"9.9.9"`)) || l.calls.Load() != 1 {
		t.Fatalf("after a change: %d loads, 9.9.9 listed: %v", l.calls.Load(), bytes.Contains(ix.Body, []byte(`"9.9.9"`)))
	}
	changed := ix
	_ = changed.Gzip()
	c, l = open()
	if ix, err := c.View(ctx, "r", Query{Format: JSON}); err != nil || ix.ETag != changed.ETag || l.calls.Load() != 0 {
		t.Fatalf("restart after the change: ETag %s (want %s), %d loads, %v", ix.ETag, changed.ETag, l.calls.Load(), err)
	}

	// A change applied to a loaded repository leaves it without a known
	// generation: what it renders next is not described.
	before := sidecars(t, dir)
	snap := func() []byte {
		b, err := os.ReadFile(filepath.Join(dir, snapshotName("r", Query{Format: YAML})))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	yamlSnap := snap()
	c, l = open()
	if _, err := c.View(ctx, "r", Query{Chart: "chart-1"}); err != nil { // loads
		t.Fatal(err)
	}
	gens.set("repo-1:c")
	c.Refresh(ctx, "r", "chart-1", "9.9.9")
	if ix, err := c.View(ctx, "r", Query{Format: YAML}); err != nil || ix.GzipFile() == "" {
		t.Fatalf("YAML view after a refresh: %v", err)
	}
	c.Flush()
	if !bytes.Equal(snap(), yamlSnap) || len(sidecars(t, dir)) != len(before) {
		t.Fatalf("a view rendered after a change applied in memory was described")
	}

	// Another generation in the store: loads, and the sidecar goes.
	gens.set("repo-1:d")
	c, l = open()
	if ix, err := c.View(ctx, "r", Query{Format: YAML}); err != nil || !bytes.Contains(ix.Body, []byte("9.9.9")) || l.calls.Load() != 1 {
		t.Fatalf("another generation: %d loads, %v", l.calls.Load(), err)
	}

	// A damaged file (same size), the gzip form or the body, fails its
	// checksum: loads, and serves the right bytes.
	for i, suffix := range []string{".gz", bodySuffix} {
		gens.set(fmt.Sprintf("repo-1:e%d", i))
		c, _ = open()
		good, err := c.View(ctx, "r", Query{Format: JSON})
		if err != nil {
			t.Fatal(err)
		}
		_ = good.Gzip()
		c.Flush()
		path := strings.TrimSuffix(good.GzipFile(), ".gz") + suffix
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0xff
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, l = open()
		ix, err := c.View(ctx, "r", Query{Format: JSON})
		if err != nil || ix.ETag != good.ETag || !bytes.Equal(ix.Body, good.Body) || !bytes.Equal(ix.Gzip(), good.Gzip()) || l.calls.Load() != 1 {
			t.Fatalf("a damaged %s file: ETag %s (want %s), %d loads, %v", suffix, ix.ETag, good.ETag, l.calls.Load(), err)
		}
	}

	// No generation: nothing is described, and a restart loads.
	gens.set("")
	for _, s := range sidecars(t, dir) {
		if err := os.Remove(s); err != nil {
			t.Fatal(err)
		}
	}
	c, _ = open()
	if ix, err := c.View(ctx, "r", Query{Format: JSON}); err != nil || ix.GzipFile() == "" {
		t.Fatalf("without a generation: %v", err)
	}
	c.Flush()
	if s := sidecars(t, dir); len(s) != 0 {
		t.Fatalf("sidecars written without a generation: %v", s)
	}
}

// TestSnapshotStartAndDrop: a start keeps the sidecars of this build and
// the files they name, and removes the rest; Drop removes a repository's
// sidecars.
func TestSnapshotStartAndDrop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index-cache")
	ctx := context.Background()
	gens := &generations{g: "repo-1:a"}
	l := &staticLoader{cvs: bigRepo(t, 2000)}
	c := New(l.load, Options{LoadVersion: l.loadVersion, DiskDir: dir, Generation: gens.get})
	ix, err := c.View(ctx, "r", Query{Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	kept := ix.GzipFile()
	c.Flush()
	other := filepath.Join(dir, "sha256-other.gz")
	foreign := filepath.Join(dir, "0123456789abcdef0123456789abcdef"+snapshotSuffix)
	for p, data := range map[string]string{other: "old", foreign: `{"repo":"r","build":"another build","file":"sha256-other.gz"}`} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c = New(l.load, Options{LoadVersion: l.loadVersion, DiskDir: dir, Generation: gens.get})
	for _, p := range []string{other, foreign} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after a start: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the described file went at start: %v", err)
	}
	if s := sidecars(t, dir); len(s) != 1 || !strings.HasSuffix(s[0], snapshotName("r", Query{Format: JSON})) {
		t.Fatalf("sidecars after a start: %v", s)
	}
	c.Drop("r")
	if s := sidecars(t, dir); len(s) != 0 {
		t.Fatalf("sidecars after Drop: %v", s)
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Fatalf("the file of a dropped snapshot, named by no Index, is still there: %v", err)
	}
}

// TestKeep: Keep writes the snapshot of a repository never served, which
// the next Cache answers from without a load; it writes nothing when the
// sidecar is already of the store's generation, nor when the generation
// moves during its read, and it leaves the Cache's memory alone.
func TestKeep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index-cache")
	ctx := context.Background()
	cvs := bigRepo(t, 2000)
	gens := &generations{g: "gen-1"}
	l := &staticLoader{cvs: cvs}
	c := New(l.load, Options{LoadVersion: l.loadVersion, DiskDir: dir, Generation: gens.get})

	kept, err := c.Keep(ctx, "r", JSON)
	if err != nil || kept == 0 {
		t.Fatalf("Keep: %d %v, want a snapshot written", kept, err)
	}
	if n := len(sidecars(t, dir)); n != 1 {
		t.Fatalf("%d sidecars after Keep, want 1", n)
	}
	c.mu.Lock()
	held := len(c.repos)
	c.mu.Unlock()
	if held != 0 {
		t.Fatalf("Keep left %d repositories in memory", held)
	}
	// Already current: no second read.
	before := l.calls.Load()
	if kept, err := c.Keep(ctx, "r", JSON); err != nil || kept != 0 || l.calls.Load() != before {
		t.Fatalf("a second Keep of the same generation: kept %d, err %v, loads %d", kept, err, l.calls.Load()-before)
	}

	// The next process answers from it, the bytes a load renders.
	c.Flush()
	l2 := &staticLoader{cvs: cvs}
	c2 := New(l2.load, Options{LoadVersion: l2.loadVersion, DiskDir: dir, Generation: gens.get})
	ix, err := c2.View(ctx, "r", Query{Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	if l2.calls.Load() != 0 {
		t.Fatal("the next process loaded the repository instead of using the kept snapshot")
	}
	l3 := &staticLoader{cvs: cvs}
	want, err := New(l3.load, Options{}).View(ctx, "r", Query{Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ix.Body, want.Body) || ix.ETag != want.ETag {
		t.Fatalf("the kept index differs from a load's: ETag %s, want %s", ix.ETag, want.ETag)
	}

	// A change committed while Keep reads: nothing is written.
	moving := &staticLoader{cvs: cvs}
	c3 := New(func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
		gens.set("gen-3")
		return moving.load(ctx, repo)
	}, Options{DiskDir: dir, Generation: gens.get})
	gens.set("gen-2")
	if kept, err := c3.Keep(ctx, "r", JSON); err != nil || kept != 0 {
		t.Fatalf("Keep across a change: kept %d, err %v; want nothing written", kept, err)
	}
	c3.Flush()
	for _, s := range sidecars(t, dir) {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "gen-2") || strings.Contains(string(data), "gen-3") {
			t.Fatalf("a sidecar names a generation Keep did not read whole: %s", data)
		}
	}
}
