package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

func TestHelmClients(t *testing.T) {
	for name, base := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) {
			s := testkit.StartServer(t)
			h := base.Fresh(t)
			s.MustRepo(t, "pub", "public")
			s.MustRepo(t, "priv", "private")

			h.Must("create", "mychart")
			h.Must("package", "mychart")
			v1 := h.Read("mychart-0.1.0.tgz")
			for _, repo := range []string{"pub", "priv"} {
				if r := s.Upload(t, repo, s.AdminKey, v1, ""); r.StatusCode != 200 {
					t.Fatalf("upload to %s: %d %s", repo, r.StatusCode, r.Body)
				}
			}

			h.Must("repo", "add", "pub", s.URL+"/helm/pub")
			if out, err := h.Run("repo", "add", "priv-anon", s.URL+"/helm/priv"); err == nil {
				t.Fatalf("private repo added without credentials:\n%s", out)
			}
			if out, err := h.Run("repo", "add", "priv-bad", s.URL+"/helm/priv", "--username", "x", "--password", "chartctl_wrong"); err == nil {
				t.Fatalf("private repo added with a wrong password:\n%s", out)
			}
			h.Must("repo", "add", "priv", s.URL+"/helm/priv", "--username", "x", "--password", s.AdminKey)
			h.Must("repo", "update")

			out := h.Must("search", "repo", "pub/", "--versions")
			if !strings.Contains(out, "pub/mychart") || !strings.Contains(out, "0.1.0") {
				t.Fatalf("search:\n%s", out)
			}
			for _, repo := range []string{"pub", "priv"} {
				dir := filepath.Join(h.Home, "pull-"+repo)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				h.Must("pull", repo+"/mychart", "--version", "0.1.0", "-d", dir)
				got, err := os.ReadFile(filepath.Join(dir, "mychart-0.1.0.tgz"))
				if err != nil || !bytes.Equal(got, v1) {
					t.Fatalf("pull from %s not byte-identical (%v)", repo, err)
				}
			}
			if out := h.Must("template", "rel", "pub/mychart", "--version", "0.1.0"); !strings.Contains(out, "kind: Deployment") {
				t.Fatalf("template:\n%s", out)
			}

			// A new version is visible after repo update; a deleted one is gone.
			h.Must("package", "mychart", "--version", "0.2.0")
			if r := s.Upload(t, "pub", s.AdminKey, h.Read("mychart-0.2.0.tgz"), ""); r.StatusCode != 200 {
				t.Fatalf("upload 0.2.0: %d %s", r.StatusCode, r.Body)
			}
			if r := s.Do(t, "DELETE", "/v1/repositories/pub/charts/mychart/0.1.0", s.AdminKey, nil); r.StatusCode != 200 {
				t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
			}
			h.Must("repo", "update")
			out = h.Must("search", "repo", "pub/mychart", "--versions")
			if !strings.Contains(out, "0.2.0") || strings.Contains(out, "0.1.0\t") || strings.Count(out, "pub/mychart") != 1 {
				t.Fatalf("search after update:\n%s", out)
			}
			if _, err := h.Run("pull", "pub/mychart", "--version", "0.1.0", "-d", filepath.Join(h.Home, "gone")); err == nil {
				t.Fatal("pulled a deleted version")
			}
		})
	}
}

// cmPush does exactly what the helm cm-push plugin does: read the index's
// serverInfo.contextPath, derive the upload URL from the repository URL,
// and POST the archive as multipart field "chart".
func cmPush(t *testing.T, repoURL string, archive []byte, force bool, basicPass, bearer string) *http.Response {
	t.Helper()
	setAuth := func(req *http.Request) {
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		} else if basicPass != "" {
			req.SetBasicAuth("ci", basicPass)
		}
	}
	req, _ := http.NewRequest("GET", strings.TrimSuffix(repoURL, "/")+"/index.yaml", nil)
	setAuth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		ServerInfo struct {
			ContextPath string `json:"contextPath"`
		} `json:"serverInfo"`
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err := yaml.Unmarshal(buf.Bytes(), &idx); err != nil {
		t.Fatalf("index: %v", err)
	}
	u, _ := url.Parse(repoURL)
	u.Path = path.Join(idx.ServerInfo.ContextPath, "api", strings.TrimPrefix(u.Path, idx.ServerInfo.ContextPath), "charts")
	if force {
		u.RawQuery = "force"
	}
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	req, _ = http.NewRequest("POST", u.String(), bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	setAuth(req)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func decodeMap(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	m := map[string]any{}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestChartMuseumPushEmulation(t *testing.T) {
	for _, allow := range []bool{false, true} {
		s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.AllowOverwrite = allow })
		s.MustRepo(t, "team", "private")
		repoURL := s.URL + "/helm/team"
		a := testkit.MakeChart(t, testkit.Chart{Name: "svc", Version: "1.0.0"})
		b := testkit.MakeChart(t, testkit.Chart{Name: "svc", Version: "1.0.0", Description: "rebuilt"})

		resp := cmPush(t, repoURL, a, false, s.AdminKey, "")
		if m := decodeMap(t, resp); resp.StatusCode != 201 || m["saved"] != true {
			t.Fatalf("basic push: %d %v", resp.StatusCode, m)
		}
		resp = cmPush(t, repoURL, a, false, "", s.AdminKey)
		if m := decodeMap(t, resp); resp.StatusCode != 409 || m["error"] == nil {
			t.Fatalf("existing version: %d %v", resp.StatusCode, m)
		}
		resp = cmPush(t, repoURL, b, true, "", s.AdminKey)
		m := decodeMap(t, resp)
		if allow && (resp.StatusCode != 201 || m["saved"] != true) || !allow && resp.StatusCode != 409 {
			t.Fatalf("force (allow=%v): %d %v", allow, resp.StatusCode, m)
		}
		// The outcome is visible through /v1.
		want := a
		if allow {
			want = b
		}
		if r := s.Do(t, "GET", "/v1/repositories/team/charts/svc/1.0.0/archive", s.AdminKey, nil); !bytes.Equal(r.Body, want) {
			t.Fatalf("archive after push (allow=%v) is not the expected one", allow)
		}
		// No or wrong credentials: 401 with a Basic challenge.
		body, ctype := testkit.Multipart(t, map[string][]byte{"chart": a})
		req, _ := http.NewRequest("POST", s.URL+"/helm/api/team/charts", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="chartctl"` {
			t.Fatalf("anonymous push: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		resp.Body.Close()
		// The read and delete endpoints answer as ChartMuseum does.
		r := s.Do(t, "GET", "/helm/api/team/charts", s.AdminKey, nil)
		var all map[string][]map[string]any
		if err := json.Unmarshal(r.Body, &all); err != nil || len(all["svc"]) != 1 || all["svc"][0]["version"] != "1.0.0" {
			t.Fatalf("list: %s", r.Body)
		}
		if r := s.Do(t, "GET", "/helm/api/team/charts/svc/1.0.0", s.AdminKey, nil); r.StatusCode != 200 || !strings.Contains(string(r.Body), `"urls":["charts/svc-1.0.0.tgz"]`) {
			t.Fatalf("version: %d %s", r.StatusCode, r.Body)
		}
		if r := s.Do(t, "DELETE", "/helm/api/team/charts/svc/1.0.0", s.AdminKey, nil); r.StatusCode != 200 || strings.TrimSpace(string(r.Body)) != `{"deleted":true}` {
			t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
		}
		if r := s.Do(t, "GET", "/helm/api/team/charts/svc", s.AdminKey, nil); r.StatusCode != 404 {
			t.Fatalf("after delete: %d %s", r.StatusCode, r.Body)
		}
		// Raw-body push, as older plugin versions and curl --data-binary do.
		req, _ = http.NewRequest("POST", s.URL+"/helm/api/team/charts", bytes.NewReader(a))
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("x:"+s.AdminKey)))
		req.Header.Set("Content-Type", "application/gzip")
		resp, err = http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("raw push: %v %d", err, resp.StatusCode)
		}
		resp.Body.Close()
	}
}

func TestHelmIndexHTTP(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "pub", "public")
	s.MustRepo(t, "priv", "")
	// This test reads the YAML text; the JSON index has its own tests.
	if r := s.DoJSON(t, "PATCH", "/v1/repositories/pub", s.AdminKey, map[string]string{"index_format": "yaml"}); r.StatusCode != 200 {
		t.Fatalf("index_format yaml: %d %s", r.StatusCode, r.Body)
	}
	for _, v := range []string{"1.0.0", "1.10.0", "1.2.0"} {
		s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: v}), "")
	}
	r := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil)
	if r.StatusCode != 200 || r.Header.Get("ETag") == "" || !strings.Contains(string(r.Body), "contextPath: /helm") {
		t.Fatalf("index: %d %s", r.StatusCode, r.Body)
	}
	i10, i2, i1 := strings.Index(string(r.Body), "version: 1.10.0"), strings.Index(string(r.Body), "version: 1.2.0"), strings.Index(string(r.Body), "version: 1.0.0")
	if !(i10 >= 0 && i10 < i2 && i2 < i1) {
		t.Fatalf("versions not newest first:\n%s", r.Body)
	}
	etag := r.Header.Get("ETag")
	if r := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil, "If-None-Match", etag); r.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", r.StatusCode)
	}
	// gzip when asked (Go's transport decompresses transparently when it
	// added the header itself, so ask explicitly here).
	req, _ := http.NewRequest("GET", s.URL+"/helm/pub/index.yaml", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v %v", err, resp.Header)
	}
	resp.Body.Close()
	// A change changes the ETag.
	s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "2.0.0"}), "")
	if r := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil, "If-None-Match", etag); r.StatusCode != 200 || !strings.Contains(string(r.Body), "2.0.0") {
		t.Fatalf("after upload: %d", r.StatusCode)
	}
	// Private: 401 with a Basic challenge, for unknown repositories too.
	for _, p := range []string{"/helm/priv/index.yaml", "/helm/ghost/index.yaml"} {
		r := s.Do(t, "GET", p, "", nil)
		if r.StatusCode != 401 || r.Header.Get("WWW-Authenticate") != `Basic realm="chartctl"` {
			t.Fatalf("%s: %d %q", p, r.StatusCode, r.Header.Get("WWW-Authenticate"))
		}
	}
	if r := s.Do(t, "GET", "/helm/priv/index.yaml", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("bearer: %d", r.StatusCode)
	}
	// Bad download names never reach storage.
	for _, p := range []string{"/helm/pub/charts/..%2F..%2Fetc%2Fpasswd", "/helm/pub/charts/app-1.0.0.tgz.prov", "/helm/pub/charts/app.tgz", "/helm/pub/charts/app-9.9.9.tgz"} {
		if r := s.Do(t, "GET", p, "", nil); r.StatusCode != 404 {
			t.Fatalf("%s: %d %s", p, r.StatusCode, r.Body)
		}
	}
	if r := s.Do(t, "GET", "/helm/pub/charts/app-1.10.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("download: %d", r.StatusCode)
	}
	// A name with a dash and a digit reads two ways; the stored one is served.
	dashed := testkit.MakeChart(t, testkit.Chart{Name: "app-2", Version: "1.0.0"})
	s.Upload(t, "pub", s.AdminKey, dashed, "")
	if r := s.Do(t, "GET", "/helm/pub/charts/app-2-1.0.0.tgz", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, dashed) {
		t.Fatalf("dashed download: %d", r.StatusCode)
	}
}

func TestProvenanceUploadAndDownload(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "pub", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "signed", Version: "1.0.0"})
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nname: signed\n...\n-----END PGP SIGNATURE-----\n")
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": prov})
	if r := s.Do(t, "POST", "/v1/repositories/pub/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	r := s.Do(t, "GET", "/helm/pub/charts/signed-1.0.0.tgz.prov", "", nil)
	if r.StatusCode != 200 || !bytes.Equal(r.Body, prov) {
		t.Fatalf("prov: %d %q", r.StatusCode, r.Body)
	}
}
