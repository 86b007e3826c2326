package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// A page number so large that page × limit overflows is past the end, not
// a panic answered with 500.
func TestPageFarPastTheEnd(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "")
	if r := s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "a", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	for _, p := range []string{
		"/v1/repositories/r/charts?page=9223372036854775807&limit=100",
		"/v1/repositories/r/charts?page=9223372036854775807&limit=100&name=a",
		"/v1/repositories/r/charts/a?page=9223372036854775807&limit=3",
		"/v1/repositories?page=9223372036854775807&limit=100",
		"/v1/search?q=a&page=9223372036854775807&limit=100",
	} {
		r := s.Do(t, http.MethodGet, p, s.AdminKey, nil)
		if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"data":[]`)) {
			t.Errorf("GET %s = %d %s, want 200 with an empty page", p, r.StatusCode, r.Body)
		}
	}
}

// staleRepos lists one repository more than the store holds, as a listing
// taken just before a concurrent delete would.
type staleRepos struct {
	chartctl.Store
}

func (s staleRepos) Repositories(ctx context.Context) ([]*chartctl.Repository, error) {
	rs, err := s.Store.Repositories(ctx)
	gone := &chartctl.Repository{ID: "repo_gone", Name: "gone", Visibility: chartctl.VisibilityPublic, CreatedAt: time.Now()}
	return append(rs, gone), err
}

// A repository deleted between search's listing and its read is skipped,
// not answered as 404 for the whole search.
func TestSearchSkipsRepositoryDeletedMeanwhile(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Store = staleRepos{srv.Store} })
	s.MustRepo(t, "r", "public")
	if r := s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	r := s.Do(t, http.MethodGet, "/v1/search?q=app", s.AdminKey, nil)
	if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"name":"app"`)) {
		t.Fatalf("search = %d %s", r.StatusCode, r.Body)
	}
}

// Accept-Encoding weights: gzip with a zero weight in any spelling is
// refused; a non-zero weight is accepted. The Content-Length always
// matches the bytes sent.
func TestIndexGzipNegotiation(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "public")
	if r := s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "a", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	for ae, want := range map[string]bool{
		"gzip": true, "gzip;q=0.5": true, "GZIP; Q=1": true, "x-gzip": true, "br, gzip;q=0.001": true,
		"gzip;q=0": false, "gzip;q=0.0": false, "gzip;Q=0": false, "gzip; q=0.000": false, "gzip;q=bogus": false,
		"identity": false, "br": false,
	} {
		req, err := http.NewRequest(http.MethodGet, s.URL+"/helm/r/index.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", ae)
		// A transport that leaves the body compressed, so the test sees
		// what was sent.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		gz := resp.Header.Get("Content-Encoding") == "gzip"
		if gz != want {
			t.Errorf("Accept-Encoding %q: gzip = %v, want %v", ae, gz, want)
		}
		if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
			t.Errorf("Accept-Encoding %q: Content-Length %s, body %d bytes", ae, cl, len(body))
		}
		if gz != bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
			t.Errorf("Accept-Encoding %q: body does not match its Content-Encoding", ae)
		}
	}
}

// gatedPuts holds the first chart upload after arm, after its record
// commits and before the handler goes on, so a test can slip other
// requests in between.
type gatedPuts struct {
	chartctl.Store
	hold atomic.Pointer[gate]
}

type gate struct{ committed, release chan struct{} }

func (g *gatedPuts) arm() *gate {
	gt := &gate{committed: make(chan struct{}), release: make(chan struct{})}
	g.hold.Store(gt)
	return gt
}

func (g *gatedPuts) PutChartVersion(ctx context.Context, cv *chartctl.ChartVersion, opts chartctl.PutVersionOptions) (*chartctl.ChartVersion, bool, []string, error) {
	stored, created, orphans, err := g.Store.PutChartVersion(ctx, cv, opts)
	if gt := g.hold.Swap(nil); gt != nil {
		close(gt.committed)
		<-gt.release
	}
	return stored, created, orphans, err
}

// An upload and a delete of the same version that commit in that order
// but reach the index cache in the other leave no entry for the deleted
// version in index.yaml.
func TestIndexAfterDeleteRacingUpload(t *testing.T) {
	g := &gatedPuts{}
	s := testkit.StartServer(t, func(srv *server.Server) { g.Store = srv.Store; srv.Store = g })
	s.MustRepo(t, "r", "public")
	if r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); r.StatusCode != 200 {
		t.Fatalf("index: %d %s", r.StatusCode, r.Body)
	}
	gt := g.arm()
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	done := make(chan *testkit.Response)
	go func() { done <- s.Upload(t, "r", s.AdminKey, archive, "") }()
	<-gt.committed
	// The upload holds its digest's lock while it is held, so the delete
	// commits and then waits for it to sweep the blob.
	deleted := make(chan *testkit.Response)
	go func() { deleted <- s.Do(t, http.MethodDelete, "/v1/repositories/r/charts/app/1.0.0", s.AdminKey, nil) }()
	waitFor(t, "the delete to commit", func() bool {
		return s.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0", s.AdminKey, nil).StatusCode == 404
	})
	close(gt.release)
	if r := <-done; r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	if r := <-deleted; r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil)
	if bytes.Contains(r.Body, []byte("app")) {
		t.Fatalf("index.yaml lists the deleted version:\n%s", r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/charts/app-1.0.0.tgz", "", nil); r.StatusCode != 404 {
		t.Fatalf("download of the deleted version: %d", r.StatusCode)
	}
}

// Two forced overwrites of one version whose index updates arrive in the
// reverse order of their commits: index.yaml carries the digest of the
// record that is stored.
func TestIndexAfterOverwritesRacing(t *testing.T) {
	g := &gatedPuts{}
	s := testkit.StartServer(t, func(srv *server.Server) {
		g.Store = srv.Store
		srv.Store = g
		srv.Config.AllowOverwrite = true
	})
	s.MustYAMLRepo(t, "r", "public")
	if r := s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0", Description: "zero"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil)
	gt := g.arm()
	first := make(chan *testkit.Response)
	go func() {
		first <- s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0", Description: "one"}), "?force=true")
	}()
	<-gt.committed
	// The second overwrite commits while the first waits.
	two := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0", Description: "two"})
	sum := sha256.Sum256(two)
	second := make(chan *testkit.Response)
	go func() { second <- s.Upload(t, "r", s.AdminKey, two, "?force=true") }()
	waitFor(t, "the second overwrite to commit", func() bool {
		return bytes.Contains(s.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0", s.AdminKey, nil).Body, []byte(hex.EncodeToString(sum[:])))
	})
	close(gt.release)
	if r := <-first; r.StatusCode != 200 {
		t.Fatalf("first overwrite: %d %s", r.StatusCode, r.Body)
	}
	if r := <-second; r.StatusCode != 200 {
		t.Fatalf("second overwrite: %d %s", r.StatusCode, r.Body)
	}
	var stored envelope[client.Chart]
	s.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0", s.AdminKey, nil).JSON(t, &stored)
	idx := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil).Body
	if !bytes.Contains(idx, []byte("digest: "+strings.TrimPrefix(stored.Data.Digest, "sha256:"))) || !bytes.Contains(idx, []byte("description: two")) {
		t.Fatalf("index.yaml does not match the stored record %s:\n%s", stored.Data.Digest, idx)
	}
}

// waitFor polls cond until it holds, failing the test after a bounded
// number of tries.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s", what)
}

// fullDisk is a blob store whose writers, from the failFrom-th Create on,
// fail as a full disk does.
type fullDisk struct {
	chartctl.BlobStore
	creates  atomic.Int32
	failFrom atomic.Int32
}

func (f *fullDisk) Create(ctx context.Context) (chartctl.BlobWriter, error) {
	w, err := f.BlobStore.Create(ctx)
	if err != nil {
		return nil, err
	}
	n := f.creates.Add(1)
	if from := f.failFrom.Load(); from > 0 && n >= from {
		return failingWriter{w}, nil
	}
	return w, nil
}

type failingWriter struct{ chartctl.BlobWriter }

func (failingWriter) Write(p []byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/secret/data/blobs/tmp/blob-123", Err: syscall.ENOSPC}
}

// A full disk while an upload streams in is the server's storage, not an
// invalid chart and not a bug: 503 unavailable in the envelope saying the
// storage is full (nothing of the OS error shown, the request id in its
// header); nothing is left in the temp directory, and the server keeps
// serving.
func TestUploadOnFullDisk(t *testing.T) {
	fd := &fullDisk{}
	s := testkit.StartServer(t, func(srv *server.Server) { fd.BlobStore = srv.Blobs; srv.Blobs = fd })
	s.MustRepo(t, "r", "")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})

	fd.failFrom.Store(1) // the archive's blob fails
	r := s.Upload(t, "r", s.AdminKey, archive, "")
	expectError(t, r, 503, "unavailable", "")
	if !bytes.Contains(r.Body, []byte("storage is full")) {
		t.Fatalf("the message does not say the storage is full: %s", r.Body)
	}
	if bytes.Contains(r.Body, []byte("secret")) || bytes.Contains(r.Body, []byte("no space left")) {
		t.Fatalf("the OS error leaked: %s", r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatalf("no request id header")
	}

	// The provenance file's blob fails; the archive's is fine.
	fd.creates.Store(0)
	fd.failFrom.Store(2)
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": []byte("-----BEGIN PGP SIGNED MESSAGE-----\n")})
	r = s.Do(t, http.MethodPost, "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
	expectError(t, r, 503, "unavailable", "")

	// ChartMuseum's raw-body upload.
	fd.creates.Store(0)
	fd.failFrom.Store(1)
	r = s.Do(t, http.MethodPost, "/helm/api/r/charts", s.AdminKey, bytes.NewReader(archive), "Content-Type", "application/gzip")
	if r.StatusCode != 503 {
		t.Fatalf("cm upload on a full disk: %d %s", r.StatusCode, r.Body)
	}

	entries, err := os.ReadDir(filepath.Join(s.Dir, "blobs", "tmp"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("temp files left: %v %v", entries, err)
	}
	fd.failFrom.Store(0)
	if r := s.Upload(t, "r", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload once space is back: %d %s", r.StatusCode, r.Body)
	}
}

// The same archive pushed again with a provenance file stores the file
// (the version had none) instead of answering 200 and dropping it; another
// file for a signed version is a conflict.
func TestProvenanceAddedToStoredVersion(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := s.Upload(t, "r", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	index := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil)
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nsigned\n")
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": prov})
	if r := s.Do(t, http.MethodPost, "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode != 200 {
		t.Fatalf("upload with prov: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/charts/app-1.0.0.tgz.prov", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, prov) {
		t.Fatalf("prov download: %d %q", r.StatusCode, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); r.Header.Get("ETag") != index.Header.Get("ETag") {
		t.Error("attaching a provenance file changed index.yaml")
	}
	body, ctype = testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": []byte("another signature\n")})
	r := s.Do(t, http.MethodPost, "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
	expectError(t, r, 409, "conflict", "")
	if r := s.Do(t, http.MethodGet, "/helm/r/charts/app-1.0.0.tgz.prov", "", nil); !bytes.Equal(r.Body, prov) {
		t.Fatalf("prov after a refused replacement: %q", r.Body)
	}
	// The refused file's blob is not kept past the grace period.
	collectPastGrace(t, s)
	var blobs int
	_ = s.Blobs.Walk(context.Background(), func(string) error { blobs++; return nil })
	if blobs != 2 {
		t.Fatalf("%d blobs stored, want archive and provenance", blobs)
	}
}

// Requests that outlive the store (a shutdown whose drain timed out) are
// answered 503 in the envelope, not 500.
func TestClosedStoreAnswers503(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "public")
	if err := s.Store.Close(); err != nil {
		t.Fatal(err)
	}
	expectError(t, s.Do(t, http.MethodGet, "/v1/repositories/r/charts", s.AdminKey, nil), 503, "unavailable", "")
	if r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); r.StatusCode != 503 {
		t.Fatalf("index.yaml on a closed store: %d %s", r.StatusCode, r.Body)
	}
}

// The archive download answers HEAD as GET without the body, with the
// length and ETag a client needs to decide whether to fetch it.
func TestArchiveHead(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := s.Upload(t, "r", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	r := s.Do(t, http.MethodHead, "/v1/repositories/r/charts/app/1.0.0/archive", s.AdminKey, nil)
	sum := sha256.Sum256(archive)
	if r.StatusCode != 200 || r.Header.Get("Content-Length") != strconv.Itoa(len(archive)) ||
		r.Header.Get("ETag") != `"sha256:`+hex.EncodeToString(sum[:])+`"` || len(r.Body) != 0 {
		t.Fatalf("HEAD archive: %d %v %q", r.StatusCode, r.Header, r.Body)
	}
	if r := s.Do(t, http.MethodHead, "/v1/repositories/r/charts/app/9.9.9/archive", s.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("HEAD of a missing version: %d", r.StatusCode)
	}
	r = s.Do(t, http.MethodPut, "/v1/repositories/r/charts/app/1.0.0/archive", s.AdminKey, nil)
	if allow := r.Header.Get("Allow"); r.StatusCode != 405 || allow != "GET, HEAD" {
		t.Fatalf("PUT archive: %d Allow %q", r.StatusCode, allow)
	}
}

// No upload that fails leaves a temp file behind: an invalid archive, one
// over the size limit, an unknown field after the archive, and a client
// that hangs up mid-body.
func TestFailedUploadsLeaveNoTempFiles(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.MaxChartSize = 64 << 10 })
	s.MustRepo(t, "r", "")
	tmp := filepath.Join(s.Dir, "blobs", "tmp")
	empty := func() bool {
		entries, err := os.ReadDir(tmp)
		return err == nil && len(entries) == 0
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	big := testkit.MakeChart(t, testkit.Chart{Name: "big", Version: "1.0.0", Files: map[string]string{"blob.bin": randomText(200 << 10)}})

	expectError(t, s.Upload(t, "r", s.AdminKey, []byte("not a chart at all"), ""), 400, "invalid_parameter", "chart")
	expectError(t, s.Upload(t, "r", s.AdminKey, big, ""), 413, "payload_too_large", "")
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "zzz": []byte("x")})
	expectError(t, s.Do(t, http.MethodPost, "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype), 400, "invalid_parameter", "zzz")
	if !empty() {
		t.Fatal("temp files left after refused uploads")
	}

	// Hang up halfway through the body.
	body, ctype = testkit.Multipart(t, map[string][]byte{"chart": archive})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /v1/repositories/r/charts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", s.AdminKey, ctype, len(body))
	if _, err := conn.Write(body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upload's temp file", func() bool { return !empty() })
	conn.Close()
	waitFor(t, "the temp file to be removed", empty)
}

// randomText returns n bytes that gzip cannot shrink much.
func randomText(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}

// A repository deleted and created again under the same name while its
// index is cached serves the new repository's (empty) index, and blobs
// only the old one held are gone.
func TestIndexOfRecreatedRepository(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := s.Upload(t, "r", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); !bytes.Contains(r.Body, []byte("app")) {
		t.Fatalf("index before: %s", r.Body)
	}
	if r := s.Do(t, http.MethodDelete, "/v1/repositories/r", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	s.MustRepo(t, "r", "public")
	if r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); bytes.Contains(r.Body, []byte("app")) {
		t.Fatalf("recreated repository serves the old index:\n%s", r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/charts/app-1.0.0.tgz", "", nil); r.StatusCode != 404 {
		t.Fatalf("old archive from the recreated repository: %d", r.StatusCode)
	}
	// Its blobs go once past the grace period.
	collectPastGrace(t, s)
	var blobs int
	_ = s.Blobs.Walk(context.Background(), func(string) error { blobs++; return nil })
	if blobs != 0 {
		t.Fatalf("%d blobs left after the repository was deleted", blobs)
	}
	// Uploading the same bytes again works and shows up.
	if r := s.Upload(t, "r", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload again: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/charts/app-1.0.0.tgz", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, archive) {
		t.Fatalf("download after re-upload: %d", r.StatusCode)
	}
	if r := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); !bytes.Contains(r.Body, []byte("app")) {
		t.Fatalf("index after re-upload:\n%s", r.Body)
	}
}

// Concurrent uploads, overwrites and deletes of a few versions: at the
// end index.yaml lists exactly the stored versions with their digests,
// every stored version downloads, and the blob directory holds exactly
// the referenced blobs.
func TestConcurrentChangesKeepIndexAndBlobsConsistent(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.AllowOverwrite = true })
	s.MustYAMLRepo(t, "r", "public")
	s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil) // cache it
	var archives [3][2][]byte
	for v := range archives {
		for d := range archives[v] {
			archives[v][d] = testkit.MakeChart(t, testkit.Chart{Name: "app", Version: fmt.Sprintf("1.0.%d", v), Description: fmt.Sprintf("variant %d", d)})
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				v, d := (w+i)%3, (w*7+i)%2
				switch (w + i*3) % 4 {
				case 0:
					s.Do(t, http.MethodDelete, fmt.Sprintf("/v1/repositories/r/charts/app/1.0.%d", v), s.AdminKey, nil)
				default:
					body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archives[v][d], "prov": []byte(fmt.Sprintf("sig %d %d\n", v, d))})
					s.Do(t, http.MethodPost, "/v1/repositories/r/charts?force=true", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
				}
			}
		})
	}
	wg.Wait()

	var list envelope[[]client.Chart]
	s.Do(t, http.MethodGet, "/v1/repositories/r/charts?limit=100", s.AdminKey, nil).JSON(t, &list)
	idx := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil).Body
	if got, want := bytes.Count(idx, []byte("digest: ")), len(list.Data); got != want {
		t.Fatalf("index.yaml has %d entries, the store %d:\n%s", got, want, idx)
	}
	referenced := map[string]bool{}
	for _, c := range list.Data {
		if !bytes.Contains(idx, []byte("digest: "+strings.TrimPrefix(c.Digest, "sha256:"))) {
			t.Errorf("index.yaml lacks %s %s", c.Version, c.Digest)
		}
		referenced[c.Digest] = true
		r := s.Do(t, http.MethodGet, "/helm/r/charts/app-"+c.Version+".tgz", "", nil)
		if sum := sha256.Sum256(r.Body); r.StatusCode != 200 || "sha256:"+hex.EncodeToString(sum[:]) != c.Digest {
			t.Errorf("download of %s: %d", c.Version, r.StatusCode)
		}
		r = s.Do(t, http.MethodGet, "/helm/r/charts/app-"+c.Version+".tgz.prov", "", nil)
		if sum := sha256.Sum256(r.Body); r.StatusCode != 200 {
			t.Errorf("prov of %s: %d", c.Version, r.StatusCode)
		} else {
			referenced["sha256:"+hex.EncodeToString(sum[:])] = true
		}
	}
	collectPastGrace(t, s)
	onDisk := map[string]bool{}
	_ = s.Blobs.Walk(context.Background(), func(d string) error { onDisk[d] = true; return nil })
	if fmt.Sprint(onDisk) != fmt.Sprint(referenced) {
		t.Fatalf("blobs on disk %v, referenced %v", onDisk, referenced)
	}
}

// lateVersions answers the ChartMuseum push's existence check as if the
// version were not there yet: a concurrent push stores it between the
// check and the commit.
type lateVersions struct{ chartctl.Store }

func (lateVersions) ChartVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	return nil, chartctl.Errorf(chartctl.ENOTFOUND, "not yet")
}

// ChartMuseum refuses an existing version even with identical bytes; that
// holds when the version is stored between its check and its commit.
func TestChartMuseumPushRacingIdenticalPush(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Store = lateVersions{srv.Store} })
	s.MustRepo(t, "r", "")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	push := func() int {
		return s.Do(t, http.MethodPost, "/helm/api/r/charts", s.AdminKey, bytes.NewReader(archive), "Content-Type", "application/gzip").StatusCode
	}
	if code := push(); code != 201 {
		t.Fatalf("first push: %d", code)
	}
	if code := push(); code != 409 {
		t.Fatalf("second push of the same version: %d, want 409", code)
	}
}

// collectPastGrace runs the orphan collection as it runs once the grace
// period has passed: unreferenced blobs younger than it are left by
// deletes (CONTRACT §12).
func collectPastGrace(t *testing.T, s *testkit.Server) {
	t.Helper()
	ctx := context.Background()
	var all []string
	if err := s.Blobs.Walk(ctx, func(d string) error { all = append(all, d); return nil }); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(s.App().BlobGrace() + time.Minute)
	for _, d := range all {
		s.App().DeleteOrphan(ctx, d, later)
	}
}
