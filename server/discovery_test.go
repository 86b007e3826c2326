package server_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

const webFixture = "../internal/chartdiff/testdata/"

// setupDiff serves the real-world-shaped fixture chart web: 1.0.0 and
// 1.1.0 in repository a, 1.1.0 also in the private repository b.
func setupDiff(t *testing.T) *testkit.Server {
	t.Helper()
	s := testkit.StartServer(t)
	s.MustRepo(t, "a", "")
	s.MustRepo(t, "b", "")
	for _, up := range []struct{ repo, dir string }{{"a", "web-1.0.0/web"}, {"a", "web-1.1.0/web"}, {"b", "web-1.1.0/web"}} {
		if r := s.Upload(t, up.repo, s.AdminKey, testkit.ArchiveDir(t, webFixture+up.dir), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", up.dir, r.StatusCode, r.Body)
		}
	}
	return s
}

func TestChartDiffJSON(t *testing.T) {
	s := setupDiff(t)
	for _, path := range []string{
		"/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0",
		"/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0&to_repo=b",
	} {
		var res envelope[client.ChartDiff]
		r := s.Do(t, "GET", path, s.AdminKey, nil)
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, r.StatusCode, r.Body)
		}
		r.JSON(t, &res)
		var files []string
		for _, f := range res.Data.Files {
			files = append(files, f.Status+" "+f.Path)
			if !strings.HasPrefix(f.Diff, "--- ") {
				t.Errorf("%s has no unified diff: %q", f.Path, f.Diff)
			}
		}
		wantFiles := []string{"modified Chart.yaml", "modified README.md", "modified crds/webs.example.com.yaml",
			"modified templates/deployment.yaml", "added templates/ingress.yaml", "removed templates/metrics-svc.yaml",
			"modified values.schema.json", "modified values.yaml"}
		if !reflect.DeepEqual(files, wantFiles) {
			t.Fatalf("%s files = %q", path, files)
		}
		v := res.Data.Values
		wantAdded := []string{"image.digest", "ingress.extraHosts[0].name", "ingress.extraHosts[0].path",
			`podAnnotations["prometheus.io/scrape"]`, "resources.limits.cpu", "service.ports.https"}
		if !reflect.DeepEqual(v.Added, wantAdded) || !reflect.DeepEqual(v.Removed, []string{"metrics.enabled"}) {
			t.Fatalf("values added %q removed %q", v.Added, v.Removed)
		}
		wantChanged := []client.ValueChange{{Key: "image.tag", From: "1.25.3", To: "1.27.0"},
			{Key: "replicaCount", From: float64(1), To: float64(2)}, {Key: "service.type", From: "LoadBalancer", To: "ClusterIP"}}
		if !reflect.DeepEqual(v.Changed, wantChanged) {
			t.Fatalf("values changed %+v", v.Changed)
		}
	}
}

func TestChartDiffText(t *testing.T) {
	s := setupDiff(t)
	r := s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0", s.AdminKey, nil, "Accept", "text/plain")
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %s: %s", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	body := string(r.Body)
	for _, want := range []string{"--- a/values.yaml\n+++ b/values.yaml\n", "-replicaCount: 1\n+replicaCount: 2\n",
		"--- /dev/null\n+++ b/templates/ingress.yaml\n", "--- a/templates/metrics-svc.yaml\n+++ /dev/null\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("text diff lacks %q:\n%s", want, body)
		}
	}
	// The same versions compared the other way round are their own
	// cache entry.
	r = s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.1.0&to=1.0.0", s.AdminKey, nil, "Accept", "text/plain")
	if !strings.Contains(string(r.Body), "-replicaCount: 2\n+replicaCount: 1\n") {
		t.Fatalf("reverse diff:\n%s", r.Body)
	}
}

func TestChartDiffAccessAndErrors(t *testing.T) {
	s := setupDiff(t)
	// A user who reads a (public) but not the private b: comparing with
	// b is 404, as if it did not exist.
	if r := s.DoJSON(t, "PATCH", "/v1/repositories/a", s.AdminKey, map[string]string{"visibility": "public"}); r.StatusCode != 200 {
		t.Fatalf("make a public: %d %s", r.StatusCode, r.Body)
	}
	u := s.MustUser(t, "dev@example.com", false)
	key := s.MustKey(t, u, chartctl.ScopeRepoRead)
	if r := s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0", key, nil); r.StatusCode != 200 {
		t.Fatalf("same repository: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0&to_repo=b", key, nil), 404, "not_found", "")
	expectError(t, s.Do(t, "GET", "/v1/repositories/b/charts/web/diff?from=1.1.0&to=1.0.0&to_repo=a", key, nil), 404, "not_found", "")
	expectError(t, s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0", "", nil), 401, "unauthorized", "")
	expectError(t, s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?to=1.1.0", key, nil), 400, "invalid_parameter", "from")
	expectError(t, s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=latest", key, nil), 400, "invalid_parameter", "to")
	expectError(t, s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=9.9.9", key, nil), 404, "not_found", "")
	expectError(t, s.Do(t, "GET", "/v1/repositories/a/charts/ghost/diff?from=1.0.0&to=1.1.0", key, nil), 404, "not_found", "")
	if r := s.Do(t, "GET", "/v1/repositories/a/charts/web/diff?from=1.0.0&to=1.1.0", s.AdminKey, nil, "Accept", "application/json"); r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("JSON by default: %s", r.Header.Get("Content-Type"))
	}
}
