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

// imageChart is a chart whose Chart.yaml lists images (none: no
// annotation) and carries extra Chart.yaml lines.
func imageChart(t *testing.T, name, version, extra string, images ...string) []byte {
	t.Helper()
	if len(images) > 0 {
		extra += "annotations:\n  artifacthub.io/images: |\n"
		for _, im := range images {
			extra += "    - name: x\n      image: " + im + "\n"
		}
	}
	return testkit.MakeChart(t, testkit.Chart{Name: name, Version: version, Extra: extra})
}

type searchBody struct {
	Data   []client.SearchResult `json:"data"`
	Meta   client.Meta           `json:"meta"`
	Facets client.SearchFacets   `json:"facets"`
}

func searchNames(t *testing.T, s *testkit.Server, key, query string) ([]string, searchBody) {
	t.Helper()
	r := s.Do(t, "GET", "/v1/search?"+query, key, nil)
	if r.StatusCode != 200 {
		t.Fatalf("search %s: %d %s", query, r.StatusCode, r.Body)
	}
	var b searchBody
	r.JSON(t, &b)
	var got []string
	for _, h := range b.Data {
		got = append(got, h.Repository+"/"+h.Name+"@"+h.Version)
	}
	return got, b
}

func TestImagesOnVersions(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "a", "")
	s.Upload(t, "a", s.AdminKey, imageChart(t, "web", "1.0.0", "", "nginx:1.25.3", "bitnami/redis:7.2"), "")
	s.Upload(t, "a", s.AdminKey, imageChart(t, "plain", "1.0.0", ""), "")
	s.Upload(t, "a", s.AdminKey, imageChart(t, "broken", "1.0.0", "annotations:\n  artifacthub.io/images: 'not: [a list'\n"), "")
	var one envelope[client.Chart]
	s.Do(t, "GET", "/v1/repositories/a/charts/web/1.0.0", s.AdminKey, nil).JSON(t, &one)
	if !reflect.DeepEqual(one.Data.Images, []string{"docker.io/bitnami/redis:7.2", "docker.io/library/nginx:1.25.3"}) || one.Data.ImagesSource != "annotation" {
		t.Fatalf("web images = %q from %q", one.Data.Images, one.Data.ImagesSource)
	}
	s.Do(t, "GET", "/v1/repositories/a/charts/plain/1.0.0", s.AdminKey, nil).JSON(t, &one)
	if len(one.Data.Images) != 0 || one.Data.ImagesSource != "pending" || one.Data.ImagesError != "" {
		t.Fatalf("no annotation: %+v", one.Data)
	}
	s.Do(t, "GET", "/v1/repositories/a/charts/broken/1.0.0", s.AdminKey, nil).JSON(t, &one)
	if one.Data.ImagesSource != "pending" || !strings.Contains(one.Data.ImagesError, "artifacthub.io/images") {
		t.Fatalf("unreadable annotation: %+v", one.Data)
	}
	// The listing carries them too.
	var list envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/a/charts?name=web", s.AdminKey, nil).JSON(t, &list)
	if len(list.Data) != 1 || len(list.Data[0].Images) != 2 {
		t.Fatalf("list = %+v", list.Data)
	}
}

func TestSearchImageAcrossRepositories(t *testing.T) {
	s := testkit.StartServer(t)
	for _, r := range []string{"a", "b", "secret"} {
		s.MustRepo(t, r, "")
	}
	s.Upload(t, "a", s.AdminKey, imageChart(t, "web", "1.0.0", "", "nginx:1.25.3"), "")
	s.Upload(t, "a", s.AdminKey, imageChart(t, "web", "1.1.0", "", "nginx:1.27.0"), "")
	s.Upload(t, "b", s.AdminKey, imageChart(t, "proxy", "2.0.0", "", "docker.io/library/nginx:1.25-alpine"), "")
	s.Upload(t, "b", s.AdminKey, imageChart(t, "other", "1.0.0", "", "docker.io/bitnami/nginx:1.25.3"), "")
	s.Upload(t, "secret", s.AdminKey, imageChart(t, "hidden", "1.0.0", "", "nginx:1.25.3"), "")
	// dev reads a and b (internal), not the private repository secret.
	for _, r := range []string{"a", "b"} {
		if res := s.DoJSON(t, "PATCH", "/v1/repositories/"+r, s.AdminKey, map[string]string{"visibility": "internal"}); res.StatusCode != 200 {
			t.Fatalf("visibility: %d %s", res.StatusCode, res.Body)
		}
	}
	dev := s.MustKey(t, s.MustUser(t, "dev@example.com", false), chartctl.ScopeRepoRead)

	got, body := searchNames(t, s, dev, "image=nginx:1.25")
	if strings.Join(got, " ") != "b/proxy@2.0.0 a/web@1.0.0" {
		t.Fatalf("image=nginx:1.25 = %q", got)
	}
	if body.Facets.Repository["a"] != 1 || body.Facets.Repository["b"] != 1 || body.Meta.Total != 2 {
		t.Fatalf("facets = %+v meta %+v", body.Facets, body.Meta)
	}
	got, _ = searchNames(t, s, dev, "image=nginx")
	if strings.Join(got, " ") != "b/proxy@2.0.0 a/web@1.1.0 a/web@1.0.0" {
		t.Fatalf("image=nginx = %q", got)
	}
	got, _ = searchNames(t, s, dev, "image=docker.io/library/nginx:1.27.0")
	if strings.Join(got, " ") != "a/web@1.1.0" {
		t.Fatalf("full reference = %q", got)
	}
	// The admin sees the private repository's chart too.
	got, _ = searchNames(t, s, s.AdminKey, "image=nginx:1.25.3")
	if strings.Join(got, " ") != "secret/hidden@1.0.0 a/web@1.0.0" {
		t.Fatalf("admin = %q", got)
	}
	expectError(t, s.Do(t, "GET", "/v1/search?image=Not%20An%20Image", dev, nil), 400, "invalid_parameter", "image")
}

func TestSearchFilters(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "a", "")
	up := func(name, extra string) {
		if r := s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: name, Version: "1.0.0", Keywords: []string{"db"}, Extra: extra}), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", name, r.StatusCode, r.Body)
		}
	}
	up("db", "kubeVersion: '>=1.29.0-0'\nannotations:\n  artifacthub.io/category: database\n  artifacthub.io/license: Apache-2.0\n")
	up("db-old", "deprecated: true\nkubeVersion: '<1.25.0-0'\nannotations:\n  artifacthub.io/category: database\n")
	up("db-any", "annotations:\n  artifacthub.io/license: MIT\n")

	got, body := searchNames(t, s, s.AdminKey, "q=db")
	if strings.Join(got, " ") != "a/db@1.0.0 a/db-any@1.0.0" {
		t.Fatalf("deprecated hidden by default: %q", got)
	}
	if body.Facets.Deprecated["false"] != 2 || body.Facets.License["MIT"] != 1 || body.Facets.Category["database"] != 1 {
		t.Fatalf("facets = %+v", body.Facets)
	}
	got, body = searchNames(t, s, s.AdminKey, "q=db&deprecated=true")
	if strings.Join(got, " ") != "a/db@1.0.0 a/db-any@1.0.0 a/db-old@1.0.0" || body.Facets.Deprecated["true"] != 1 {
		t.Fatalf("deprecated=true: %q %+v", got, body.Facets)
	}
	got, _ = searchNames(t, s, s.AdminKey, "kube_version=1.31&deprecated=true")
	if strings.Join(got, " ") != "a/db@1.0.0 a/db-any@1.0.0" {
		t.Fatalf("kube_version=1.31: %q", got)
	}
	got, _ = searchNames(t, s, s.AdminKey, "kube_version=1.24.3&deprecated=true")
	if strings.Join(got, " ") != "a/db-any@1.0.0 a/db-old@1.0.0" {
		t.Fatalf("kube_version=1.24.3: %q", got)
	}
	got, _ = searchNames(t, s, s.AdminKey, "category=Database&deprecated=1")
	if strings.Join(got, " ") != "a/db@1.0.0 a/db-old@1.0.0" {
		t.Fatalf("category: %q", got)
	}
	got, _ = searchNames(t, s, s.AdminKey, "license=mit")
	if strings.Join(got, " ") != "a/db-any@1.0.0" {
		t.Fatalf("license: %q", got)
	}
	got, _ = searchNames(t, s, s.AdminKey, "keyword=DB")
	if len(got) != 2 {
		t.Fatalf("keyword: %q", got)
	}
	expectError(t, s.Do(t, "GET", "/v1/search?kube_version=latest", s.AdminKey, nil), 400, "invalid_parameter", "kube_version")
	expectError(t, s.Do(t, "GET", "/v1/search?q=db&deprecated=maybe", s.AdminKey, nil), 400, "invalid_parameter", "deprecated")
}
