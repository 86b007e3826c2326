package chartpage_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartpage"
)

func mustArchive(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for p, c := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "demo/" + p, Mode: 0o644, Size: int64(len(c)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write([]byte(c)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func mustBlob(tb testing.TB, bs chartctl.BlobStore, b []byte) string {
	tb.Helper()
	w, err := bs.Create(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		tb.Fatal(err)
	}
	d, err := w.Commit()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

type env struct {
	dir   string
	db    *bolt.DB
	blobs *blob.Store
}

func setup(tb testing.TB) *env {
	tb.Helper()
	dir := tb.TempDir()
	e := &env{dir: dir}
	e.open(tb)
	return e
}

func (e *env) open(tb testing.TB) {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(e.dir, "chartctl.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	bs, err := blob.Open(filepath.Join(e.dir, "blobs"))
	if err != nil {
		tb.Fatal(err)
	}
	e.db, e.blobs = db, bs
}

func (e *env) pages() *chartpage.Store {
	return chartpage.New(chartpage.Options{Blobs: e.blobs, Backend: chartpage.BackendFor(e.db), Limits: chart.Limits{}})
}

func TestRenderOnceThenServeStored(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	digest := mustBlob(t, e.blobs, mustArchive(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "README.md": "# Hello\n"}))
	ps := e.pages()
	if err := ps.Render(ctx, digest); err != nil {
		t.Fatal(err)
	}
	if b, err := e.db.ChartPage(ctx, digest); err != nil || len(b) == 0 {
		t.Fatalf("kept page: %d bytes, %v", len(b), err)
	}
	// Nothing is added to the blob store, which holds only referenced blobs.
	n := 0
	if err := e.blobs.Walk(ctx, func(string) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("%d blobs, %v", n, err)
	}
	// After a restart the page comes from the store, even with the archive
	// gone: nothing is rendered again.
	if err := e.blobs.Delete(ctx, digest); err != nil {
		t.Fatal(err)
	}
	p, err := e.pages().Get(ctx, digest)
	if err != nil || p.Name != "demo" || p.ReadmeHTML == "" {
		t.Fatalf("stored page: %+v, %v", p, err)
	}
}

func TestGetRendersOnMiss(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	digest := mustBlob(t, e.blobs, mustArchive(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n"}))
	// A version stored before pages existed: no page yet.
	p, err := e.pages().Get(ctx, digest)
	if err != nil || p.Version != "1.0.0" {
		t.Fatalf("lazy render: %+v, %v", p, err)
	}
	if _, err := e.db.ChartPage(ctx, digest); err != nil {
		t.Fatalf("the lazily rendered page was not kept: %v", err)
	}
	// A page of an older format is rendered again.
	if err := e.db.SetChartPages(ctx, map[string][]byte{digest: []byte(`{"format":0,"name":"stale"}`)}); err != nil {
		t.Fatal(err)
	}
	if p, err := e.pages().Get(ctx, digest); err != nil || p.Name != "demo" {
		t.Fatalf("after an old page: %+v, %v", p, err)
	}
}

func TestGetUnknownAndInvalid(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	if _, err := e.pages().Get(ctx, "sha256:"+string(bytes.Repeat([]byte("a"), 64))); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("unknown digest: %v", err)
	}
	bad := mustBlob(t, e.blobs, []byte("not a chart"))
	if _, err := e.pages().Get(ctx, bad); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Errorf("invalid archive: %v", err)
	}
}

func TestForget(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	digest := mustBlob(t, e.blobs, mustArchive(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n"}))
	ps := e.pages()
	if err := ps.Render(ctx, digest); err != nil {
		t.Fatal(err)
	}
	if err := ps.Forget(ctx, digest); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ChartPage(ctx, digest); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("page survives: %v", err)
	}
	if err := ps.Forget(ctx, digest); err != nil {
		t.Errorf("forgetting twice: %v", err)
	}
}

func TestNoBackend(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	digest := mustBlob(t, e.blobs, mustArchive(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n"}))
	ps := chartpage.New(chartpage.Options{Blobs: e.blobs, Backend: chartpage.BackendFor(struct{}{})})
	for range 2 {
		if p, err := ps.Get(ctx, digest); err != nil || p.Name != "demo" {
			t.Fatalf("%+v %v", p, err)
		}
	}
}

// TestRenderLater: a page queued by RenderLater is rendered and kept by
// Run, without a view; with no Run it is not, and a view renders it.
func TestRenderLater(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	digest := mustBlob(t, e.blobs, mustArchive(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n", "README.md": "# Later\n"}))
	ps := e.pages()
	ps.RenderLater(digest)
	if _, err := e.db.ChartPage(ctx, digest); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("a page kept before Run: %v", err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		ps.Run(stop)
		close(done)
	}()
	defer func() {
		close(stop)
		<-done
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := e.db.ChartPage(ctx, digest)
		if err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run kept no page 30 s after RenderLater: %v", err)
		}
	}
}

// countingBackend counts the writes of pages to a real backend.
type countingBackend struct {
	chartpage.Backend
	mu     sync.Mutex
	writes []int
}

func (c *countingBackend) SetChartPages(ctx context.Context, pages map[string][]byte) error {
	c.mu.Lock()
	c.writes = append(c.writes, len(pages))
	c.mu.Unlock()
	return c.Backend.SetChartPages(ctx, pages)
}

// TestRenderLaterBatches: pages queued together are kept in one write, a
// digest queued twice is rendered once, and each page is in memory before
// the write.
func TestRenderLaterBatches(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	var digests []string
	for i := range 5 {
		digests = append(digests, mustBlob(t, e.blobs, mustArchive(t, map[string]string{
			"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: demo\nversion: 1.0.%d\n", i)})))
	}
	counting := &countingBackend{Backend: chartpage.BackendFor(e.db)}
	ps := chartpage.New(chartpage.Options{Blobs: e.blobs, Backend: counting})
	for _, d := range append(digests, digests[0]) {
		ps.RenderLater(d)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		ps.Run(stop)
		close(done)
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		kept := 0
		for _, d := range digests {
			if _, err := e.db.ChartPage(ctx, d); err == nil {
				kept++
			}
		}
		if kept == len(digests) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pages kept 30 s after RenderLater", kept, len(digests))
		}
	}
	close(stop)
	<-done
	counting.mu.Lock()
	defer counting.mu.Unlock()
	if !slices.Equal(counting.writes, []int{5}) {
		t.Fatalf("writes of pages: %v, want one of 5", counting.writes)
	}
}

// TestRenderLaterWaitsForAPause: pages keep joining the batch while
// pushes keep queueing them (here 80 ms apart, with a quiet time far
// longer), and a batch is rendered at its bound even if the pushes never
// pause.
func TestRenderLaterWaitsForAPause(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	var digests []string
	for i := range 4 {
		digests = append(digests, mustBlob(t, e.blobs, mustArchive(t, map[string]string{
			"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: demo\nversion: 2.0.%d\n", i)})))
	}
	kept := func(ds []string) bool {
		for _, d := range ds {
			if _, err := e.db.ChartPage(ctx, d); err != nil {
				return false
			}
		}
		return true
	}
	run := func(ps *chartpage.Store) func() {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			ps.Run(stop)
			close(done)
		}()
		return func() { close(stop); <-done }
	}

	// A stream that never pauses for LaterQuiet: one write of all.
	counting := &countingBackend{Backend: chartpage.BackendFor(e.db)}
	ps := chartpage.New(chartpage.Options{Blobs: e.blobs, Backend: counting, LaterQuiet: 2 * time.Second, LaterMax: time.Hour})
	end := run(ps)
	for _, d := range digests[:3] {
		ps.RenderLater(d)
		time.Sleep(80 * time.Millisecond)
	}
	for deadline := time.Now().Add(30 * time.Second); !kept(digests[:3]); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("pages not kept 30 s after the stream")
		}
	}
	end()
	counting.mu.Lock()
	if !slices.Equal(counting.writes, []int{3}) {
		t.Errorf("writes of pages during a stream: %v, want one of 3", counting.writes)
	}
	counting.mu.Unlock()

	// No pause at all: the bound ends the wait.
	counting = &countingBackend{Backend: chartpage.BackendFor(e.db)}
	ps = chartpage.New(chartpage.Options{Blobs: e.blobs, Backend: counting, LaterQuiet: time.Hour, LaterMax: 100 * time.Millisecond})
	end = run(ps)
	defer end()
	ps.RenderLater(digests[3])
	for deadline := time.Now().Add(30 * time.Second); !kept(digests[3:]); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a page waited past its bound")
		}
	}
}
