package server_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// A ChartMuseum upload or delete with a credential that cannot write
// names the scope the operation needs (repo:write, as /v1 does), not
// repo:read: a CI job given a key with team scopes only was told to add
// repo:read, and then, with that, repo:write.
func TestChartMuseumWriteNamesRepoWrite(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "private", "")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := s.Upload(t, "private", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	for _, sc := range []chartctl.Scope{chartctl.ScopeTeamRead, chartctl.ScopeRepoRead} {
		key := s.MustKey(t, s.Admin, sc)
		do := func(method, path string, body []byte) *testkit.Response {
			t.Helper()
			req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth("ci", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			return &testkit.Response{Response: resp, Body: b.Bytes()}
		}
		for _, r := range []*testkit.Response{
			do(http.MethodPost, "/helm/api/private/charts", archive),
			do(http.MethodDelete, "/helm/api/private/charts/app/1.0.0", nil),
		} {
			if r.StatusCode != 403 || !bytes.Contains(r.Body, []byte("repo:write")) {
				t.Errorf("key with %s: %s %s = %d %s, want 403 naming repo:write", sc, r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
			}
		}
	}
}
