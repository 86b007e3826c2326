package server_test

import (
	"bytes"
	"context"
	"net/http"
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
