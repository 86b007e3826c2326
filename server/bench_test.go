package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/token"
)

// benchServer is a server over a real store, served in-process through its
// router (no sockets), with limits high enough never to refuse.
func benchServer(b *testing.B) (*Server, string) {
	b.Helper()
	dir := b.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	s := New(db, blobs)
	s.Logger = slog.New(slog.DiscardHandler)
	big := ratelimit.Limit{N: 1 << 30, Window: time.Hour}
	s.Config.GlobalLimit, s.Config.UploadLimit, s.Config.SearchLimit = big, big, big
	s.Extra = func(e *echo.Echo) {
		s.API().GET("/bench-noop", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	}
	s.Handler()
	ctx := context.Background()
	u := &chartctl.User{Email: "bench@example.com", Admin: true}
	if err := db.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	v, h := token.New(token.APIKeyPrefix)
	if err := db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: u.ID, Name: "bench", Scopes: chartctl.AllScopes, Hash: h}); err != nil {
		b.Fatal(err)
	}
	return s, v
}

func serve(b *testing.B, s *Server, req *http.Request, want int) {
	rec := httptest.NewRecorder()
	s.echo.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s: %d %s", req.URL, rec.Code, rec.Body)
	}
}

// BenchmarkAuthRateLimit is an authenticated request to a handler that
// does nothing: routing, request id, logging, metrics, API-key
// authentication and the rate-limit step. Compare with BenchmarkHealthz,
// which has all of that but the last two.
func BenchmarkAuthRateLimit(b *testing.B) {
	s, key := benchServer(b)
	req := httptest.NewRequest(http.MethodGet, "/v1/bench-noop", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	serve(b, s, req, http.StatusNoContent)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		serve(b, s, req, http.StatusNoContent)
	}
}

// BenchmarkHealthz is the same request path without authentication.
func BenchmarkHealthz(b *testing.B) {
	s, _ := benchServer(b)
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		serve(b, s, req, http.StatusOK)
	}
}

// BenchmarkListRepositories lists 50 repositories.
func BenchmarkListRepositories(b *testing.B) {
	s, key := benchServer(b)
	ctx := context.Background()
	u, _ := s.Store.UserByEmail(ctx, "bench@example.com")
	for i := 0; i < 50; i++ {
		if err := s.Store.CreateRepository(ctx, &chartctl.Repository{Name: fmt.Sprintf("repo-%02d", i), OwnerID: u.ID}); err != nil {
			b.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/repositories?limit=50", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		serve(b, s, req, http.StatusOK)
	}
}

// BenchmarkListCharts lists one page of 100 from 2,000 chart versions.
func BenchmarkListCharts(b *testing.B) {
	s, key := benchServer(b)
	ctx := context.Background()
	u, _ := s.Store.UserByEmail(ctx, "bench@example.com")
	if err := s.Store.CreateRepository(ctx, &chartctl.Repository{Name: "r", OwnerID: u.ID}); err != nil {
		b.Fatal(err)
	}
	// Concurrent puts share commits, which keeps the setup quick.
	const n = 2000
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			cv := &chartctl.ChartVersion{Repository: "r", Name: fmt.Sprintf("chart-%02d", i%40), Version: fmt.Sprintf("1.%d.0", i),
				Description: "A chart", Digest: fmt.Sprintf("sha256:%064x", i), Size: 3000,
				Metadata: []byte(fmt.Sprintf(`{"name":"chart-%02d","version":"1.%d.0","description":"A chart","apiVersion":"v2"}`, i%40, i))}
			_, _, _, err := s.Store.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/repositories/r/charts?limit=100&page=3", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		serve(b, s, req, http.StatusOK)
	}
}

// BenchmarkUpload stores a new chart version per iteration: multipart
// parsing, streaming validation, blob fsync and the metadata commit.
func BenchmarkUpload(b *testing.B) {
	s, key := benchServer(b)
	ctx := context.Background()
	u, _ := s.Store.UserByEmail(ctx, "bench@example.com")
	if err := s.Store.CreateRepository(ctx, &chartctl.Repository{Name: "r", OwnerID: u.ID}); err != nil {
		b.Fatal(err)
	}
	bodies := make([][]byte, b.N)
	ctypes := make([]string, b.N)
	for i := range bodies {
		bodies[i], ctypes[i] = multipartChart(b, fmt.Sprintf("1.0.%d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/v1/repositories/r/charts", bytes.NewReader(bodies[i]))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", ctypes[i])
		serve(b, s, req, http.StatusOK)
	}
}

// multipartChart builds an upload body holding a small valid chart.
func multipartChart(b *testing.B, version string) ([]byte, string) {
	b.Helper()
	var arch bytes.Buffer
	gz := gzip.NewWriter(&arch)
	tw := tar.NewWriter(gz)
	files := map[string]string{
		"bench/Chart.yaml":                "apiVersion: v2\nname: bench\nversion: " + version + "\ndescription: A benchmark chart\nappVersion: \"1.0\"\n",
		"bench/values.yaml":               "replicaCount: 1\n",
		"bench/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
	}
	for _, name := range []string{"bench/Chart.yaml", "bench/values.yaml", "bench/templates/deployment.yaml"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			b.Fatal(err)
		}
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	gz.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("chart", "bench.tgz")
	fw.Write(arch.Bytes())
	mw.Close()
	return body.Bytes(), mw.FormDataContentType()
}

// discardWriter is a ResponseWriter that keeps nothing but the status, so
// a benchmark counts the server's allocations, not a recorder's.
type discardWriter struct {
	h      http.Header
	status int
	n      int64
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += int64(len(p))
	return len(p), nil
}

// benchRead serves req b.N times through the whole router and reports
// allocations per request.
func benchRead(b *testing.B, s *Server, req *http.Request, want int) {
	b.Helper()
	w := &discardWriter{h: http.Header{}}
	s.echo.ServeHTTP(w, req)
	if w.status != want {
		b.Fatalf("%s: status %d, want %d", req.URL, w.status, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		w.status, w.n = 0, 0
		s.echo.ServeHTTP(w, req)
	}
	b.StopTimer()
	if w.status != want {
		b.Fatalf("%s: status %d, want %d", req.URL, w.status, want)
	}
}

// benchHelmRepo fills a public repository "pub" with n versions (the
// first with a provenance file) through the upload handler and returns
// the archive file name of that first version.
func benchHelmRepo(b *testing.B, s *Server, key string, n int) string {
	b.Helper()
	ctx := context.Background()
	u, _ := s.Store.UserByEmail(ctx, "bench@example.com")
	if err := s.Store.CreateRepository(ctx, &chartctl.Repository{Name: "pub", OwnerID: u.ID, Visibility: chartctl.VisibilityPublic}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		body, ctype := multipartChartProv(b, fmt.Sprintf("1.0.%d", i), i == 0)
		req := httptest.NewRequest(http.MethodPost, "/v1/repositories/pub/charts", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", ctype)
		serve(b, s, req, http.StatusOK)
	}
	return "bench-1.0.0.tgz"
}

// multipartChartProv is multipartChart with, optionally, a provenance
// file.
func multipartChartProv(b *testing.B, version string, prov bool) ([]byte, string) {
	body, ctype := multipartChart(b, version)
	if !prov {
		return body, ctype
	}
	// Rebuild with a second part: the archive bytes are in the first.
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	f, _, err := req.FormFile("chart")
	if err != nil {
		b.Fatal(err)
	}
	var arch bytes.Buffer
	arch.ReadFrom(f)
	var out bytes.Buffer
	mw := multipart.NewWriter(&out)
	fw, _ := mw.CreateFormFile("chart", "bench.tgz")
	fw.Write(arch.Bytes())
	pw, _ := mw.CreateFormFile("prov", "bench.tgz.prov")
	pw.Write([]byte("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nname: bench\n-----BEGIN PGP SIGNATURE-----\n\nwsBcBAEBCgAQ\n-----END PGP SIGNATURE-----\n"))
	mw.Close()
	return out.Bytes(), mw.FormDataContentType()
}

// BenchmarkHelmIndex is GET index.yaml of a public repository of 200
// versions, anonymous, as Helm, Flux and Argo CD poll it.
func BenchmarkHelmIndex(b *testing.B) {
	s, key := benchServer(b)
	benchHelmRepo(b, s, key, 200)
	b.Run("gzip", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, "/helm/pub/index.yaml", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		benchRead(b, s, req, http.StatusOK)
	})
	b.Run("identity", func(b *testing.B) {
		benchRead(b, s, httptest.NewRequest(http.MethodGet, "/helm/pub/index.yaml", nil), http.StatusOK)
	})
	b.Run("not-modified", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, "/helm/pub/index.yaml", nil)
		rec := httptest.NewRecorder()
		s.echo.ServeHTTP(rec, req)
		req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
		req.Header.Set("Accept-Encoding", "gzip")
		benchRead(b, s, req, http.StatusNotModified)
	})
}

// BenchmarkHelmDownload is GET charts/NAME-VERSION.tgz and its .prov from
// a public repository, anonymous.
func BenchmarkHelmDownload(b *testing.B) {
	s, key := benchServer(b)
	file := benchHelmRepo(b, s, key, 200)
	b.Run("tgz", func(b *testing.B) {
		benchRead(b, s, httptest.NewRequest(http.MethodGet, "/helm/pub/charts/"+file, nil), http.StatusOK)
	})
	b.Run("prov", func(b *testing.B) {
		benchRead(b, s, httptest.NewRequest(http.MethodGet, "/helm/pub/charts/"+file+".prov", nil), http.StatusOK)
	})
	b.Run("archive-api-key", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, "/v1/repositories/pub/charts/bench/1.0.0/archive", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		benchRead(b, s, req, http.StatusOK)
	})
}
