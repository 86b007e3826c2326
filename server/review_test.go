package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

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
