package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// readerFromLog records what the connection's ReadFrom was handed: a
// file there is what Go sends with sendfile.
type readerFromLog struct {
	http.ResponseWriter
	mu      *sync.Mutex
	sources *[]string
}

func (w readerFromLog) ReadFrom(src io.Reader) (int64, error) {
	kind := fmt.Sprintf("%T", src)
	if lr, ok := src.(*io.LimitedReader); ok {
		kind += " of " + fmt.Sprintf("%T", lr.R)
	}
	w.mu.Lock()
	*w.sources = append(*w.sources, kind)
	w.mu.Unlock()
	return w.ResponseWriter.(io.ReaderFrom).ReadFrom(src)
}

func TestLargeIndexGzipFromDisk(t *testing.T) {
	var (
		mu      sync.Mutex
		sources []string
	)
	cacheDir := filepath.Join(t.TempDir(), "index-cache")
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Config.IndexCacheDir = cacheDir
		srv.Extra = func(e *echo.Echo) {
			e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					c.Response().Writer = readerFromLog{c.Response().Writer, &mu, &sources}
					return next(c)
				}
			})
		}
	})
	s.MustYAMLRepo(t, "pub", "public")
	// Versions whose descriptions do not compress, so the gzip form of
	// the index passes helmindex.DiskMin. Concurrent puts share commits.
	ctx := context.Background()
	const n = 1500
	rng := rand.New(rand.NewPCG(3, 4))
	cvs := make([]*chartctl.ChartVersion, n)
	for i := range cvs {
		name, version := fmt.Sprintf("chart-%02d", i%30), fmt.Sprintf("1.%d.0", i)
		desc := fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
		cvs[i] = &chartctl.ChartVersion{Repository: "pub", Name: name, Version: version, Description: desc,
			Digest: fmt.Sprintf("sha256:%064x", i), Size: 3000,
			Metadata: []byte(`{"apiVersion":"v2","name":"` + name + `","version":"` + version + `","description":"` + desc + `"}`)}
		cvs[i].IndexEntry = helmindex.RenderEntry(cvs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	for _, cv := range cvs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, _, _, err := s.Store.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	ident, body := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "identity")
	if ident.StatusCode != 200 || bytes.Count(body, []byte("\n    version: ")) != n {
		t.Fatalf("identity: %d, %d bytes", ident.StatusCode, len(body))
	}
	etag := ident.Header.Get("ETag")
	mu.Lock()
	sources = nil
	mu.Unlock()

	gz, zbody := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "gzip")
	if gz.StatusCode != 200 || len(zbody) < helmindex.DiskMin {
		t.Fatalf("gzip: %d, %d bytes (want at least %d: make the repository bigger)", gz.StatusCode, len(zbody), helmindex.DiskMin)
	}
	wantHeader(t, "gzip", gz.Header, "Content-Encoding", "gzip")
	wantHeader(t, "gzip", gz.Header, "Content-Length", strconv.Itoa(len(zbody)))
	wantHeader(t, "gzip", gz.Header, "Content-Type", "application/x-yaml")
	wantHeader(t, "gzip", gz.Header, "ETag", etag)
	wantHeader(t, "gzip", gz.Header, "Vary", "Accept-Encoding")
	wantHeader(t, "gzip", gz.Header, "Cache-Control", "no-cache")
	if gz.Header.Get("Last-Modified") != ident.Header.Get("Last-Modified") || gz.Header.Get("Last-Modified") == "" {
		t.Errorf("Last-Modified %q, identity's %q", gz.Header.Get("Last-Modified"), ident.Header.Get("Last-Modified"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zbody))
	if err != nil {
		t.Fatal(err)
	}
	if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, body) {
		t.Fatal("the gzip body does not decompress to the identity body")
	}
	// The body went to the connection as the file (sendfile), and the
	// file is the one named by the ETag, holding these very bytes.
	mu.Lock()
	got := sources
	mu.Unlock()
	if len(got) != 1 || got[0] != "*io.LimitedReader of *os.File" {
		t.Errorf("the connection was handed %q, want one *io.LimitedReader of *os.File (sendfile)", got)
	}
	onDisk, err := os.ReadFile(filepath.Join(cacheDir, etag[1:len(etag)-1]+".gz"))
	if err != nil || !bytes.Equal(onDisk, zbody) {
		t.Errorf("the cache file does not hold the body sent (%d bytes, %v)", len(onDisk), err)
	}

	// HEAD: the headers only.
	r, b := raw(t, s, "HEAD", "/helm/pub/index.yaml", "Accept-Encoding", "gzip")
	if r.StatusCode != 200 || len(b) != 0 {
		t.Fatalf("HEAD: %d, %d bytes", r.StatusCode, len(b))
	}
	wantHeader(t, "HEAD", r.Header, "Content-Length", strconv.Itoa(len(zbody)))
	wantHeader(t, "HEAD", r.Header, "Content-Encoding", "gzip")
	// Conditional requests are answered before any file is opened.
	if r, b := raw(t, s, "GET", "/helm/pub/index.yaml", "If-None-Match", etag, "Accept-Encoding", "gzip"); r.StatusCode != 304 || len(b) != 0 {
		t.Fatalf("If-None-Match: %d, %d bytes", r.StatusCode, len(b))
	}
	// A refused coding gets identity, from memory.
	if r, b := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, body) {
		t.Fatalf("gzip;q=0: %v", r.Header)
	}

	// A new version: a new ETag, and the gzip body follows it.
	resp := s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "chart-00", Version: "9.0.0"}), "")
	if resp.StatusCode != 200 {
		t.Fatalf("upload: %d %s", resp.StatusCode, resp.Body)
	}
	gz2, zbody2 := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "gzip", "If-None-Match", etag)
	if gz2.StatusCode != 200 || gz2.Header.Get("ETag") == etag {
		t.Fatalf("after an upload: %d, ETag %s (was %s)", gz2.StatusCode, gz2.Header.Get("ETag"), etag)
	}
	zr, err = gzip.NewReader(bytes.NewReader(zbody2))
	if err != nil {
		t.Fatal(err)
	}
	if unzipped, _ := io.ReadAll(zr); !bytes.Contains(unzipped, []byte("version: 9.0.0")) {
		t.Fatal("the gzip body after an upload lacks the new version")
	}
}
