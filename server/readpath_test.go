package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/blobtest"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// raw sends a request without the transport's own gzip handling, so the
// test sees the bytes and headers as sent.
func raw(t *testing.T, s *testkit.Server, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func wantHeader(t *testing.T, what string, h http.Header, key, want string) {
	t.Helper()
	if got := h.Values(key); len(got) != 1 || got[0] != want {
		t.Errorf("%s: %s = %q, want %q", what, key, got, want)
	}
}

// index.yaml served from pre-formatted header values: every header is
// right for the representation sent, on GET and HEAD, gzip and identity.
func TestIndexHeadersPerRepresentation(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustYAMLRepo(t, "pub", "public")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: v}), "")
	}
	ident, body := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "identity")
	if ident.StatusCode != 200 || !strings.Contains(string(body), "version: 1.1.0") {
		t.Fatalf("identity: %d %s", ident.StatusCode, body)
	}
	etag := ident.Header.Get("ETag")
	wantHeader(t, "identity", ident.Header, "Content-Length", strconv.Itoa(len(body)))
	wantHeader(t, "identity", ident.Header, "Content-Type", "application/x-yaml")
	wantHeader(t, "identity", ident.Header, "Vary", "Accept-Encoding")
	wantHeader(t, "identity", ident.Header, "Cache-Control", "no-cache")
	if ident.Header.Get("Content-Encoding") != "" || ident.Header.Get("X-Request-Id") == "" {
		t.Errorf("identity: %v", ident.Header)
	}

	gz, zbody := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "br, gzip;q=0.5")
	wantHeader(t, "gzip", gz.Header, "Content-Encoding", "gzip")
	wantHeader(t, "gzip", gz.Header, "Content-Length", strconv.Itoa(len(zbody)))
	wantHeader(t, "gzip", gz.Header, "ETag", etag)
	zr, err := gzip.NewReader(bytes.NewReader(zbody))
	if err != nil {
		t.Fatal(err)
	}
	if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, body) {
		t.Fatal("gzip body does not decompress to the identity body")
	}

	// A refused coding gets identity.
	if r, b := raw(t, s, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "gzip;q=0, identity"); r.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, body) {
		t.Fatalf("gzip;q=0: %v", r.Header)
	}

	for _, c := range []struct {
		enc, length string
	}{{"identity", strconv.Itoa(len(body))}, {"gzip", strconv.Itoa(len(zbody))}} {
		r, b := raw(t, s, "HEAD", "/helm/pub/index.yaml", "Accept-Encoding", c.enc)
		if r.StatusCode != 200 || len(b) != 0 {
			t.Fatalf("HEAD %q: %d, %d bytes", c.enc, r.StatusCode, len(b))
		}
		wantHeader(t, "HEAD "+c.enc, r.Header, "Content-Length", c.length)
		wantHeader(t, "HEAD "+c.enc, r.Header, "ETag", etag)
	}

	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		r, b := raw(t, s, "GET", "/helm/pub/index.yaml", "If-None-Match", inm, "Accept-Encoding", "gzip")
		if r.StatusCode != 304 || len(b) != 0 || r.Header.Get("ETag") != etag || r.Header.Get("Content-Encoding") != "" {
			t.Fatalf("If-None-Match %s: %d %v", inm, r.StatusCode, r.Header)
		}
	}
	if r, _ := raw(t, s, "GET", "/helm/pub/index.yaml", "If-None-Match", `"other"`, "Accept-Encoding", "identity"); r.StatusCode != 200 {
		t.Fatalf("If-None-Match of another tag: %d", r.StatusCode)
	}

	// The shared header values stay intact when a later layer adds to
	// a header: the next response is unchanged.
	s2 := testkit.StartServer(t, func(srv *server.Server) {
		srv.Extra = func(e *echo.Echo) {
			e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					err := next(c)
					c.Response().Header().Add("Vary", "Origin")
					c.Response().Header().Add("Cache-Control", "public")
					return err
				}
			})
		}
	})
	s2.MustRepo(t, "pub", "public")
	for range 3 {
		r, _ := raw(t, s2, "GET", "/helm/pub/index.yaml", "Accept-Encoding", "gzip")
		wantHeader(t, "after Add", r.Header, "Vary", "Accept-Encoding")
		wantHeader(t, "after Add", r.Header, "Cache-Control", "no-cache")
	}
}

// Chart archives and provenance files keep ranges, HEAD, conditional
// requests and their headers now that they are sent with sendfile.
//
// Every case runs twice: with the blobs served from memory (the
// application layer's cache of small blobs, the default) and from their
// files (the cache off; sendfile for the larger ones). Both send the same
// headers.
func TestDownloadRangesAndConditionals(t *testing.T) {
	var seen [2]map[string]http.Header
	for i, size := range []int64{server.DefaultBlobCacheSize, 0} {
		name := map[int64]string{0: "from files"}[size]
		if name == "" {
			name = "from memory"
		}
		t.Run(name, func(t *testing.T) {
			seen[i] = downloadRangesAndConditionals(t, size)
		})
	}
	for path, h := range seen[0] {
		// The time-dependent headers differ by the second between the two
		// servers (the rate-limit window's reset is a Unix time).
		for _, k := range []string{"Date", "X-Request-Id", "X-Ratelimit-Reset"} {
			h.Del(k)
			seen[1][path].Del(k)
		}
		if !equalHeaders(h, seen[1][path]) {
			t.Errorf("%s: from memory\n%v\nfrom files\n%v", path, h, seen[1][path])
		}
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

// downloadRangesAndConditionals checks the downloads of a server whose
// blob cache has the given size, and returns the headers of each whole
// GET and HEAD.
func downloadRangesAndConditionals(t *testing.T, cacheSize int64) map[string]http.Header {
	seen := map[string]http.Header{}
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.BlobCacheSize = cacheSize })
	s.MustRepo(t, "pub", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	prov := []byte(strings.Repeat("-----BEGIN PGP SIGNED MESSAGE-----\n", 20))
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": prov})
	if r := s.Do(t, "POST", "/v1/repositories/pub/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	// A chart too large to be copied with its header goes by sendfile.
	var readme strings.Builder
	for i := range 4000 {
		readme.WriteString(strconv.FormatUint(uint64(i)*2654435761%1000003, 36))
	}
	big := testkit.MakeChart(t, testkit.Chart{Name: "big", Version: "1.0.0", Files: map[string]string{"README.md": readme.String()}})
	if len(big) < 8<<10 {
		t.Fatalf("the large chart is only %d bytes", len(big))
	}
	if r := s.Upload(t, "pub", s.AdminKey, big, ""); r.StatusCode != 200 {
		t.Fatalf("upload big: %d %s", r.StatusCode, r.Body)
	}
	for _, c := range []struct {
		path, key, ctype string
		want             []byte
	}{
		{"/helm/pub/charts/app-1.0.0.tgz", "", "application/gzip", archive},
		{"/helm/pub/charts/big-1.0.0.tgz", "", "application/gzip", big},
		{"/helm/pub/charts/app-1.0.0.tgz.prov", "", "application/pgp-signature", prov},
		{"/v1/repositories/pub/charts/app/1.0.0/archive", s.AdminKey, "application/gzip", archive},
	} {
		auth := []string{}
		if c.key != "" {
			auth = []string{"Authorization", "Bearer " + c.key}
		}
		r, b := raw(t, s, "GET", c.path, auth...)
		if r.StatusCode != 200 || !bytes.Equal(b, c.want) {
			t.Fatalf("%s: %d, %d bytes", c.path, r.StatusCode, len(b))
		}
		seen["GET "+c.path] = r.Header
		wantHeader(t, c.path, r.Header, "Content-Length", strconv.Itoa(len(c.want)))
		wantHeader(t, c.path, r.Header, "Content-Type", c.ctype)
		wantHeader(t, c.path, r.Header, "Accept-Ranges", "bytes")
		etag := r.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"sha256:`) || !strings.Contains(r.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("%s: %v", c.path, r.Header)
		}

		r, b = raw(t, s, "GET", c.path, append(auth, "Range", "bytes=5-14")...)
		if r.StatusCode != 206 || !bytes.Equal(b, c.want[5:15]) {
			t.Fatalf("%s range: %d %q", c.path, r.StatusCode, b)
		}
		wantHeader(t, c.path+" range", r.Header, "Content-Range", "bytes 5-14/"+strconv.Itoa(len(c.want)))
		wantHeader(t, c.path+" range", r.Header, "Content-Length", "10")

		r, b = raw(t, s, "GET", c.path, append(auth, "Range", "bytes=-3")...)
		if r.StatusCode != 206 || !bytes.Equal(b, c.want[len(c.want)-3:]) {
			t.Fatalf("%s suffix range: %d %q", c.path, r.StatusCode, b)
		}
		if r, _ = raw(t, s, "GET", c.path, append(auth, "Range", "bytes=99999-")...); r.StatusCode != 416 {
			t.Fatalf("%s unsatisfiable range: %d", c.path, r.StatusCode)
		}

		r, b = raw(t, s, "HEAD", c.path, auth...)
		if r.StatusCode != 200 || len(b) != 0 {
			t.Fatalf("%s HEAD: %d, %d bytes", c.path, r.StatusCode, len(b))
		}
		seen["HEAD "+c.path] = r.Header
		wantHeader(t, c.path+" HEAD", r.Header, "Content-Length", strconv.Itoa(len(c.want)))
		wantHeader(t, c.path+" HEAD", r.Header, "ETag", etag)

		if r, b = raw(t, s, "GET", c.path, append(auth, "If-None-Match", etag)...); r.StatusCode != 304 || len(b) != 0 {
			t.Fatalf("%s If-None-Match: %d", c.path, r.StatusCode)
		}
		// If-Range with the current tag honours the range.
		if r, b = raw(t, s, "GET", c.path, append(auth, "Range", "bytes=0-1", "If-Range", etag)...); r.StatusCode != 206 || len(b) != 2 {
			t.Fatalf("%s If-Range: %d", c.path, r.StatusCode)
		}
	}

	// Downloads are counted with the status sent.
	m := s.Do(t, "GET", "/metrics", "", nil)
	for _, want := range []string{
		`chartctl_http_requests_total{method="GET",route="/helm/:repo/charts/:file",status="200"}`,
		`chartctl_http_requests_total{method="GET",route="/helm/:repo/charts/:file",status="206"}`,
		`chartctl_http_requests_total{method="HEAD",route="/helm/:repo/charts/:file",status="200"}`,
		`chartctl_http_requests_total{method="GET",route="/helm/:repo/charts/:file",status="304"}`,
	} {
		if !strings.Contains(string(m.Body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The three blobs were served from memory, or never kept.
	st := s.App().BlobCacheStats()
	if wantBlobs := map[bool]int{true: 3, false: 0}[cacheSize > 0]; st.Blobs != wantBlobs {
		t.Errorf("blob cache of size %d holds %d blobs, want %d (%+v)", cacheSize, st.Blobs, wantBlobs, st)
	}
	if cacheSize > 0 && st.Hits == 0 {
		t.Errorf("no download was served from memory: %+v", st)
	}
	return seen
}

// Records kept for the read path never hide a change made through the
// server: an overwrite, a delete and a deleted-and-recreated repository
// are all seen by the very next request.
//
// Orphaned blobs are deleted at once here (a negative grace period), so
// the blobs of the replaced and the deleted archive, served from memory
// before, are seen to leave memory with their files; with the default
// grace they stay on disk for a while, unreachable all the same.
func TestReadsSeeChangesAtOnce(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Config.AllowOverwrite = true
		srv.Config.BlobGrace = -time.Second
	})
	s.MustRepo(t, "pub", "public")
	first := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	second := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0", Description: "the second build"})
	if r := s.Upload(t, "pub", s.AdminKey, first, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	if r, b := raw(t, s, "GET", "/helm/pub/charts/app-1.0.0.tgz"); r.StatusCode != 200 || !bytes.Equal(b, first) {
		t.Fatalf("first download: %d", r.StatusCode)
	}
	if r := s.Upload(t, "pub", s.AdminKey, second, "?force=true"); r.StatusCode != 200 {
		t.Fatalf("overwrite: %d %s", r.StatusCode, r.Body)
	}
	if r, b := raw(t, s, "GET", "/helm/pub/charts/app-1.0.0.tgz"); r.StatusCode != 200 || !bytes.Equal(b, second) {
		t.Fatalf("download after overwrite: %d, same bytes as before: %v", r.StatusCode, bytes.Equal(b, first))
	}
	// The replaced archive, served from memory before, is gone from there
	// with its blob.
	ctx := context.Background()
	if _, err := s.App().OpenBlob(ctx, blobtest.Digest(first)); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("blob of the replaced archive: %v, want ENOTFOUND", err)
	}
	if _, b := raw(t, s, "GET", "/helm/pub/index.yaml"); !strings.Contains(string(b), "the second build") {
		t.Fatalf("index after overwrite:\n%s", b)
	}
	if r := s.Do(t, "DELETE", "/v1/repositories/pub/charts/app/1.0.0", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d", r.StatusCode)
	}
	if r, _ := raw(t, s, "GET", "/helm/pub/charts/app-1.0.0.tgz"); r.StatusCode != 404 {
		t.Fatalf("download after delete: %d", r.StatusCode)
	}
	if _, err := s.App().OpenBlob(ctx, blobtest.Digest(second)); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("blob of the deleted chart: %v, want ENOTFOUND", err)
	}
	if st := s.App().BlobCacheStats(); st.Blobs != 0 {
		t.Fatalf("blobs of deleted charts kept in memory: %+v", st)
	}
	if r := s.Do(t, "DELETE", "/v1/repositories/pub", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete repository: %d %s", r.StatusCode, r.Body)
	}
	// Deleted, then recreated private: anonymous readers are refused at once.
	s.MustRepo(t, "pub", "private")
	if r, _ := raw(t, s, "GET", "/helm/pub/index.yaml"); r.StatusCode != 401 {
		t.Fatalf("index of the recreated private repository: %d", r.StatusCode)
	}
}

// The repository list is kept between requests, yet every change shows in
// the very next one: a creation, a change of visibility, a deletion.
func TestRepositoryListSeesChangesAtOnce(t *testing.T) {
	s := testkit.StartServer(t)
	bob := s.MustUser(t, "bob@example.com", false)
	bobKey := s.MustKey(t, bob, chartctl.AllScopes...)
	list := func(key string) string {
		t.Helper()
		r := s.Do(t, "GET", "/v1/repositories?limit=100", key, nil)
		if r.StatusCode != 200 {
			t.Fatalf("list: %d %s", r.StatusCode, r.Body)
		}
		var page struct {
			Data []struct{ Name, Visibility string }
		}
		r.JSON(t, &page)
		var names []string
		for _, d := range page.Data {
			names = append(names, d.Name+":"+d.Visibility)
		}
		return strings.Join(names, " ")
	}
	if got := list(bobKey); got != "" {
		t.Fatalf("empty server lists %q", got)
	}
	s.MustRepo(t, "alpha", "private")
	if got := list(s.AdminKey); got != "alpha:private" {
		t.Fatalf("after create: %q", got)
	}
	if got := list(bobKey); got != "" {
		t.Fatalf("another user sees %q", got)
	}
	if r := s.DoJSON(t, "PATCH", "/v1/repositories/alpha", s.AdminKey, map[string]string{"visibility": "public"}); r.StatusCode != 200 {
		t.Fatalf("update: %d %s", r.StatusCode, r.Body)
	}
	if got := list(bobKey); got != "alpha:public" {
		t.Fatalf("after making it public: %q", got)
	}
	s.MustRepo(t, "beta", "public")
	if got := list(bobKey); got != "alpha:public beta:public" {
		t.Fatalf("after a second create: %q", got)
	}
	if r := s.Do(t, "DELETE", "/v1/repositories/alpha", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if got := list(bobKey); got != "beta:public" {
		t.Fatalf("after delete: %q", got)
	}
}

// Downloads keep no more blob bytes in memory than the budget, and every
// download is whole whether its blob was kept, evicted or never kept.
func TestBlobCacheKeepsItsBudget(t *testing.T) {
	var archives [][]byte
	for i := range 8 {
		archives = append(archives, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0." + strconv.Itoa(i)}))
	}
	budget := int64(len(archives[0]) * 3)
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.BlobCacheSize = budget })
	s.MustRepo(t, "pub", "public")
	for _, a := range archives {
		if r := s.Upload(t, "pub", s.AdminKey, a, ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	for round := range 3 {
		for i, a := range archives {
			r, b := raw(t, s, "GET", "/helm/pub/charts/app-1.0."+strconv.Itoa(i)+".tgz")
			if r.StatusCode != 200 || !bytes.Equal(b, a) {
				t.Fatalf("round %d, download %d: %d, %d bytes", round, i, r.StatusCode, len(b))
			}
			if st := s.App().BlobCacheStats(); st.Bytes > budget || st.Blobs > 3 {
				t.Fatalf("over budget %d: %+v", budget, st)
			}
		}
	}
	if st := s.App().BlobCacheStats(); st.Blobs == 0 {
		t.Fatalf("nothing kept: %+v", st)
	}
}
