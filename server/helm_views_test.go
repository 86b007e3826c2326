package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestHelmClientsJSONAndViews: Helm 3 and Helm 4 add, update, search and
// pull from a JSON index, a per-chart index and a newest-N index.
func TestHelmClientsJSONAndViews(t *testing.T) {
	for name, base := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) {
			s := testkit.StartServer(t)
			h := base.Fresh(t)
			s.MustRepo(t, "pub", "public")
			s.MustRepo(t, "priv", "private")
			archives := map[string][]byte{}
			for _, c := range []testkit.Chart{{Name: "web", Version: "1.0.0"}, {Name: "web", Version: "1.1.0"}, {Name: "web", Version: "2.0.0-rc.1"}, {Name: "api", Version: "0.1.0"}} {
				a := testkit.MakeChart(t, c)
				archives[c.Name+"-"+c.Version] = a
				for _, repo := range []string{"pub", "priv"} {
					if r := s.Upload(t, repo, s.AdminKey, a, ""); r.StatusCode != 200 {
						t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
					}
				}
			}
			if r := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil); !json.Valid(r.Body) {
				t.Fatalf("a new repository's index is not JSON:\n%s", r.Body)
			}
			h.Must("repo", "add", "full", s.URL+"/helm/pub")
			h.Must("repo", "add", "web", s.URL+"/helm/pub/charts/web")
			h.Must("repo", "add", "newest", s.URL+"/helm/pub/latest/2")
			h.Must("repo", "add", "privweb", s.URL+"/helm/priv/charts/web", "--username", "x", "--password", s.AdminKey)
			if out, err := h.Run("repo", "add", "anon", s.URL+"/helm/priv/charts/web"); err == nil {
				t.Fatalf("a private per-chart index added without credentials:\n%s", out)
			}
			h.Must("repo", "update")

			search := func(prefix string) string {
				return h.Must("search", "repo", prefix, "--versions", "--devel")
			}
			if out := search("full/"); !strings.Contains(out, "full/api") || strings.Count(out, "full/web") != 3 {
				t.Errorf("full index:\n%s", out)
			}
			// Helm's search matches anywhere in the name: count lines that
			// start with the repository.
			lines := func(out, prefix string) (n int) {
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(strings.Join(strings.Fields(l), "\t")+"\t", prefix) {
						n++
					}
				}
				return n
			}
			if out := search("web/"); lines(out, "web/api") != 0 || lines(out, "web/web\t") != 3 {
				t.Errorf("per-chart index:\n%s", out)
			}
			// Newest two of each chart, SemVer order, pre-releases count.
			out := search("newest/")
			if lines(out, "newest/web\t") != 2 || lines(out, "newest/web\t2.0.0-rc.1") != 1 || lines(out, "newest/web\t1.1.0") != 1 || lines(out, "newest/api\t") != 1 {
				t.Errorf("newest-2 index:\n%s", out)
			}
			for _, p := range []struct{ ref, version, file string }{
				{"full/web", "1.0.0", "web-1.0.0"}, {"web/web", "1.1.0", "web-1.1.0"},
				{"newest/api", "0.1.0", "api-0.1.0"}, {"privweb/web", "1.0.0", "web-1.0.0"},
			} {
				dir := filepath.Join(h.Home, "pull-"+strings.ReplaceAll(p.ref, "/", "-"))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				h.Must("pull", p.ref, "--version", p.version, "-d", dir)
				got, err := os.ReadFile(filepath.Join(dir, p.file+".tgz"))
				if err != nil || !bytes.Equal(got, archives[p.file]) {
					t.Errorf("pull %s %s: not the uploaded archive (%v)", p.ref, p.version, err)
				}
			}
		})
	}
}

// TestIndexViewsHTTP: the per-chart and newest-N indexes over HTTP, their
// validators, and what they refuse.
func TestIndexViewsHTTP(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "pub", "public")
	s.MustRepo(t, "priv", "private")
	for _, c := range []testkit.Chart{{Name: "web", Version: "1.0.0"}, {Name: "web", Version: "1.2.0"}, {Name: "api", Version: "0.1.0"}} {
		s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, c), "")
		s.Upload(t, "priv", s.AdminKey, testkit.MakeChart(t, c), "")
	}
	get := func(path string, header ...string) *testkit.Response {
		t.Helper()
		return s.Do(t, "GET", path, "", nil, header...)
	}

	full := get("/helm/pub/index.yaml")
	if full.StatusCode != 200 || full.Header.Get("Content-Type") != "application/json" || full.Header.Get("Last-Modified") == "" {
		t.Fatalf("index: %d %v", full.StatusCode, full.Header)
	}
	web := get("/helm/pub/charts/web/index.yaml")
	var ix struct {
		Entries map[string][]struct {
			Version string   `json:"version"`
			URLs    []string `json:"urls"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(web.Body, &ix); err != nil || len(ix.Entries) != 1 || len(ix.Entries["web"]) != 2 {
		t.Fatalf("per-chart index: %v\n%s", err, web.Body)
	}
	// Its relative URLs resolve below it, to the archive.
	if u := ix.Entries["web"][0].URLs[0]; u != "charts/web-1.2.0.tgz" {
		t.Fatalf("url %q", u)
	}
	if r := get("/helm/pub/charts/web/charts/web-1.2.0.tgz"); r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("download below the per-chart index: %d", r.StatusCode)
	}
	if r := get("/helm/pub/charts/web/charts/api-0.1.0.tgz"); r.StatusCode != 404 {
		t.Fatalf("another chart's archive below web's index: %d", r.StatusCode)
	}
	if r := get("/helm/pub/latest/1/charts/api-0.1.0.tgz"); r.StatusCode != 200 {
		t.Fatalf("download below the newest-N index: %d", r.StatusCode)
	}

	// Validators: ETag, and If-Modified-Since without If-None-Match.
	etag, lm := web.Header.Get("ETag"), web.Header.Get("Last-Modified")
	if r := get("/helm/pub/charts/web/index.yaml", "If-None-Match", etag); r.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", r.StatusCode)
	}
	if r := get("/helm/pub/charts/web/index.yaml", "If-Modified-Since", lm); r.StatusCode != 304 || r.Header.Get("ETag") != etag {
		t.Fatalf("If-Modified-Since: %d", r.StatusCode)
	}
	lmt, _ := http.ParseTime(lm)
	if r := get("/helm/pub/charts/web/index.yaml", "If-Modified-Since", lmt.Add(-time.Second).Format(http.TimeFormat)); r.StatusCode != 200 {
		t.Fatalf("If-Modified-Since before Last-Modified: %d", r.StatusCode)
	}
	if r := get("/helm/pub/charts/web/index.yaml", "If-None-Match", `"other"`, "If-Modified-Since", lm); r.StatusCode != 200 {
		t.Fatalf("If-None-Match wins over If-Modified-Since: %d", r.StatusCode)
	}
	// gzip, in the repository's format.
	req, _ := http.NewRequest("GET", s.URL+"/helm/pub/latest/5/index.yaml", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("gzip: %v %v", err, resp.Header)
	}
	resp.Body.Close()

	// Another chart changes: web's index keeps its ETag; newest-N and the
	// full index change.
	latest := get("/helm/pub/latest/2/index.yaml").Header.Get("ETag")
	s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "api", Version: "0.2.0"}), "")
	if r := get("/helm/pub/charts/web/index.yaml", "If-None-Match", etag); r.StatusCode != 304 {
		t.Errorf("web's index changed with api: %d", r.StatusCode)
	}
	if r := get("/helm/pub/latest/2/index.yaml", "If-None-Match", latest); r.StatusCode != 200 {
		t.Errorf("newest-2 kept its ETag after api gained a newest version")
	}
	s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"}), "")
	if r := get("/helm/pub/charts/web/index.yaml", "If-None-Match", etag); r.StatusCode != 200 {
		t.Errorf("web's index kept its ETag after web changed")
	}

	// The YAML format: the same entries, read by a YAML parser that
	// knows nothing of JSON as by one that reads JSON.
	if r := s.DoJSON(t, "PATCH", "/v1/repositories/pub", s.AdminKey, map[string]string{"index_format": "yaml"}); r.StatusCode != 200 || !strings.Contains(string(r.Body), `"index_format":"yaml"`) {
		t.Fatalf("PATCH index_format: %d %s", r.StatusCode, r.Body)
	}
	y := get("/helm/pub/index.yaml")
	if y.Header.Get("Content-Type") != "application/x-yaml" || json.Valid(y.Body) {
		t.Fatalf("yaml index: %v", y.Header)
	}
	s.DoJSON(t, "PATCH", "/v1/repositories/pub", s.AdminKey, map[string]string{"index_format": "json"})
	j := get("/helm/pub/index.yaml")
	var fromJSON, fromYAML struct {
		Entries map[string][]map[string]any `json:"entries" yaml:"entries"`
	}
	if err := yamlv3.Unmarshal(j.Body, &fromJSON); err != nil {
		t.Fatalf("yaml.v3 reads the JSON index: %v", err)
	}
	if err := yaml.Unmarshal(y.Body, &fromYAML); err != nil {
		t.Fatal(err)
	}
	if len(fromJSON.Entries) != 2 || len(fromJSON.Entries["web"]) != len(fromYAML.Entries["web"]) {
		t.Fatalf("entries differ: %v", fromJSON.Entries)
	}
	for name, vs := range fromYAML.Entries {
		for i, v := range vs {
			for _, k := range []string{"version", "digest", "urls", "name", "apiVersion"} {
				if !reflect.DeepEqual(v[k], fromJSON.Entries[name][i][k]) {
					t.Errorf("%s[%d].%s: yaml %v, json %v", name, i, k, v[k], fromJSON.Entries[name][i][k])
				}
			}
		}
	}

	// Refusals: bad N, unknown chart, private without a credential (401
	// first, as for the full index), an unknown format.
	for _, p := range []string{"/helm/pub/latest/0/index.yaml", "/helm/pub/latest/101/index.yaml", "/helm/pub/latest/x/index.yaml"} {
		if r := get(p); r.StatusCode != 400 || !strings.Contains(string(r.Body), `"parameter":"n"`) {
			t.Errorf("%s: %d %s", p, r.StatusCode, r.Body)
		}
	}
	if r := get("/helm/pub/charts/nope/index.yaml"); r.StatusCode != 404 {
		t.Errorf("unknown chart: %d", r.StatusCode)
	}
	for _, p := range []string{"/helm/priv/charts/web/index.yaml", "/helm/priv/latest/0/index.yaml", "/helm/ghost/charts/web/index.yaml"} {
		if r := get(p); r.StatusCode != 401 || r.Header.Get("WWW-Authenticate") != `Basic realm="chartctl"` {
			t.Errorf("%s: %d", p, r.StatusCode)
		}
	}
	if r := s.Do(t, "GET", "/helm/priv/charts/web/index.yaml", s.AdminKey, nil); r.StatusCode != 200 {
		t.Errorf("private with a credential: %d", r.StatusCode)
	}
	if r := s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "odd", "index_format": "toml"}); r.StatusCode != 400 || !strings.Contains(string(r.Body), `"parameter":"index_format"`) {
		t.Errorf("unknown format: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "classic", "index_format": "yaml"}); r.StatusCode != 200 || !strings.Contains(string(r.Body), `"index_format":"yaml"`) {
		t.Errorf("create yaml: %d %s", r.StatusCode, r.Body)
	}
}
