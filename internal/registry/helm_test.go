package registry_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// pull pulls an oci:// chart into a fresh directory and returns its bytes.
func pull(t *testing.T, h *testkit.Helm, ref, version string, extra ...string) ([]byte, error) {
	t.Helper()
	dir, err := os.MkdirTemp(h.Home, "pull-")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"pull", ref, "--version", version, "--plain-http", "-d", dir}, extra...)
	if out, err := h.Run(args...); err != nil {
		return nil, &helmError{out: out, err: err}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(files) != 1 {
		t.Fatalf("pull %s: files %v", ref, files)
	}
	return os.ReadFile(files[0])
}

type helmError struct {
	out string
	err error
}

func (e *helmError) Error() string { return e.err.Error() + "\n" + e.out }

var digestRE = regexp.MustCompile(`Digest: (sha256:[0-9a-f]{64})`)

// TestHelmOCI drives real Helm 4 and Helm 3 against the registry: login,
// push, pull byte-identical, show, template and a client-side install dry
// run from oci://; anonymous pull of a public repository and refusal of a
// private one; and one chart on both protocols: a push over OCI is in /v1
// and index.yaml, an upload over /v1 or the ChartMuseum API pulls over OCI
// byte for byte, and a delete on either side is gone on the other.
func TestHelmOCI(t *testing.T) {
	for name, base := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) {
			e := setup(t)
			mustRepoIn(t, e, "pub", "public")
			mustRepoIn(t, e, "priv", "private")
			host := strings.TrimPrefix(e.URL, "http://")
			h := base.Fresh(t)
			v1 := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.3+build.7"})
			pkg := h.Write("web-1.2.3+build.7.tgz", v1)

			if out, err := h.Run("registry", "login", host, "--username", "ci", "--password", "chartctl_wrong", "--plain-http"); err == nil {
				t.Fatalf("login with a wrong key succeeded:\n%s", out)
			}
			h.Must("registry", "login", host, "--username", "ci", "--password", e.AdminKey, "--plain-http")
			out := h.Must("push", pkg, "oci://"+host+"/priv", "--plain-http")
			m := digestRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("push output has no digest:\n%s", out)
			}

			// The pushed chart is a chart version: in /v1 and in index.yaml.
			r := e.Do(t, "GET", "/v1/repositories/priv/charts/web/1.2.3+build.7", e.AdminKey, nil)
			if r.StatusCode != 200 {
				t.Fatalf("/v1 after OCI push: %d %s", r.StatusCode, r.Body)
			}
			r = e.do(t, "GET", "/helm/priv/index.yaml", e.AdminKey, nil)
			if !bytes.Contains(r.Body, []byte("1.2.3+build.7")) {
				t.Fatalf("index.yaml after OCI push:\n%s", r.Body)
			}
			r = e.do(t, "GET", "/helm/priv/charts/web-1.2.3+build.7.tgz", e.AdminKey, nil)
			if !bytes.Equal(r.Body, v1) {
				t.Fatalf("classic download after OCI push differs (%d bytes)", len(r.Body))
			}

			got, err := pull(t, h, "oci://"+host+"/priv/web", "1.2.3+build.7")
			if err != nil || !bytes.Equal(got, v1) {
				t.Fatalf("pull: %v (%d bytes, want %d)", err, len(got), len(v1))
			}
			if out := h.Must("show", "chart", "oci://"+host+"/priv/web", "--version", "1.2.3+build.7", "--plain-http"); !strings.Contains(out, "name: web") {
				t.Fatalf("show chart:\n%s", out)
			}
			if out := h.Must("template", "rel", "oci://"+host+"/priv/web", "--version", "1.2.3+build.7", "--plain-http"); !strings.Contains(out, "kind: Deployment") || !strings.Contains(out, "name: rel") {
				t.Fatalf("template:\n%s", out)
			}
			// Helm 3's install reaches for a cluster even with
			// --dry-run=client; its offline rendering is `helm template`.
			if name == "helm4" {
				if out := h.Must("install", "rel", "oci://"+host+"/priv/web", "--version", "1.2.3+build.7", "--plain-http", "--dry-run=client"); !strings.Contains(out, "kind: Deployment") {
					t.Fatalf("install --dry-run:\n%s", out)
				}
			}
			// A chart pushed twice with the same bytes is the same version;
			// other bytes at the same version are refused.
			h.Must("push", pkg, "oci://"+host+"/priv", "--plain-http")
			other := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.3+build.7", Description: "changed"})
			if out, err := h.Run("push", h.Write("other/web-1.2.3+build.7.tgz", other), "oci://"+host+"/priv", "--plain-http"); err == nil {
				t.Fatalf("overwrite over OCI accepted:\n%s", out)
			}

			// Uploaded over /v1 and the ChartMuseum API: pullable over OCI,
			// anonymously from the public repository.
			api := testkit.MakeChart(t, testkit.Chart{Name: "api", Version: "0.1.0"})
			if r := e.Upload(t, "pub", e.AdminKey, api, ""); r.StatusCode != 200 && r.StatusCode != 201 {
				t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
			}
			cm := testkit.MakeChart(t, testkit.Chart{Name: "cm", Version: "2.0.0"})
			if r := e.do(t, "POST", "/helm/api/pub/charts", e.AdminKey, cm, "Content-Type", "application/octet-stream"); r.StatusCode != 201 {
				t.Fatalf("cm-push: %d %s", r.StatusCode, r.Body)
			}
			anon := base.Fresh(t)
			for name, want := range map[string][]byte{"api": api, "cm": cm} {
				version := map[string]string{"api": "0.1.0", "cm": "2.0.0"}[name]
				got, err := pull(t, anon, "oci://"+host+"/pub/"+name, version)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("anonymous pull of %s: %v (%d bytes)", name, err, len(got))
				}
			}
			if _, err := pull(t, anon, "oci://"+host+"/priv/web", "1.2.3+build.7"); err == nil {
				t.Fatal("anonymous pull of a private chart succeeded")
			}
			// The derived manifest is the same on every request.
			d1 := e.do(t, "HEAD", "/v2/pub/api/manifests/0.1.0", "", nil).Header.Get("Docker-Content-Digest")
			d2 := e.do(t, "GET", "/v2/pub/api/manifests/0.1.0", "", nil).Header.Get("Docker-Content-Digest")
			if d1 == "" || d1 != d2 {
				t.Fatalf("derived manifest digests %q %q", d1, d2)
			}

			// Deleting on one protocol deletes on the other.
			if r := e.do(t, "DELETE", "/v2/priv/web/manifests/"+m[1], e.AdminKey, nil); r.StatusCode != 202 {
				t.Fatalf("delete over OCI: %d %s", r.StatusCode, r.Body)
			}
			if r := e.Do(t, "GET", "/v1/repositories/priv/charts/web/1.2.3+build.7", e.AdminKey, nil); r.StatusCode != 404 {
				t.Fatalf("/v1 after OCI delete: %d", r.StatusCode)
			}
			if r := e.Do(t, "DELETE", "/v1/repositories/pub/charts/api/0.1.0", e.AdminKey, nil); r.StatusCode != 200 && r.StatusCode != 204 {
				t.Fatalf("/v1 delete: %d %s", r.StatusCode, r.Body)
			}
			if _, err := pull(t, anon, "oci://"+host+"/pub/api", "0.1.0"); err == nil {
				t.Fatal("pull after /v1 delete succeeded")
			}
			var tags struct{ Tags []string }
			e.do(t, "GET", "/v2/pub/cm/tags/list", "", nil).JSON(t, &tags)
			if b, _ := json.Marshal(tags.Tags); string(b) != `["2.0.0"]` {
				t.Fatalf("tags = %s", b)
			}
		})
	}
}
