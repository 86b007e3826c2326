package mirror_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/disttest"
)

// TestMirrorOCIUpstream: charts pushed by the real `helm push` to the
// CNCF Distribution registry (htpasswd Basic auth) are mirrored from
// oci://HOST/PATH/CHART (every tag, through tags/list's Link pages) and
// from oci://HOST/PATH (every chart repository the catalog lists under
// PATH, through its Link pages); the real Helm client then pulls them
// from chartctl, byte for byte, over the Helm protocol and over OCI. A
// registry without a catalog (as GHCR) makes a namespace mirror fail
// with the form to use instead, which then works.
func TestMirrorOCIUpstream(t *testing.T) {
	dist := disttest.Start(t, disttest.Options{Username: "ci", Password: "dist-secret"})
	helm := testkit.NewHelm(t)
	work := t.TempDir()
	run := func(args ...string) string { return testkit.RunHelm(t, helm.Bin, work, args...) }
	run("create", "alpha")
	run("create", "beta")
	run("package", "alpha", "--version", "0.1.0", "-d", work)
	run("package", "alpha", "--version", "0.2.0", "-d", work)
	run("package", "beta", "--version", "1.0.0+build.1", "-d", work)
	h := helm.Fresh(t)
	h.Must("registry", "login", dist.Host, "--username", "ci", "--password", "dist-secret", "--plain-http")
	for _, pkg := range []string{"alpha-0.1.0.tgz", "alpha-0.2.0.tgz", "beta-1.0.0+build.1.tgz"} {
		h.Must("push", filepath.Join(work, pkg), "oci://"+dist.Host+"/charts", "--plain-http")
	}
	// Another namespace the catalog lists, which a mirror of charts
	// leaves alone.
	h.Must("push", filepath.Join(work, "alpha-0.1.0.tgz"), "oci://"+dist.Host+"/other", "--plain-http")

	// A front of the registry without /v2/_catalog, as GHCR and Docker
	// Hub are.
	target, _ := url.Parse(dist.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	noCatalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/_catalog" {
			http.Error(w, `{"errors":[{"code":"UNSUPPORTED","message":"no catalog here"}]}`, http.StatusNotFound)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(noCatalog.Close)
	noCatalogHost := strings.TrimPrefix(noCatalog.URL, "http://")

	e := setup(t, envOptions{ociPageSize: 1, plainHTTP: []string{dist.Host, noCatalogHost}})
	cred := func(u string) map[string]string {
		return map[string]string{"url": u, "username": "ci", "password": "dist-secret"}
	}
	e.createMirror(t, "one", cred("oci://"+dist.Host+"/charts/alpha"))
	e.createMirror(t, "all", cred("oci://"+dist.Host+"/charts/"))
	for _, name := range []string{"one", "all"} {
		res, err := e.Syncer.Sync(t.Context(), name)
		if err != nil {
			t.Fatalf("sync %s: %v", name, err)
		}
		t.Logf("%s added %v", name, res.Added)
	}
	if got := strings.Join(e.versions(t, "one"), " "); got != "alpha@0.1.0 alpha@0.2.0" {
		t.Errorf("oci://HOST/charts/alpha mirrored %s", got)
	}
	if got := strings.Join(e.versions(t, "all"), " "); got != "alpha@0.1.0 alpha@0.2.0 beta@1.0.0+build.1" {
		t.Errorf("oci://HOST/charts mirrored %s", got)
	}
	if m := e.repo(t, "all").Mirror; m.Status != "ok" || m.URL != "oci://"+dist.Host+"/charts" {
		t.Errorf("mirror state %+v", m)
	}
	// A second sync finds everything there and copies nothing.
	if res, err := e.Syncer.Sync(t.Context(), "all"); err != nil || len(res.Added) != 0 {
		t.Errorf("second sync: %v %+v", err, res)
	}

	// Helm pulls what helm pushed, byte for byte: over the Helm protocol…
	same := func(what, got string, want string) {
		t.Helper()
		a, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the archive pulled from chartctl differs from the one pushed upstream", what)
		}
	}
	pc := helm.Fresh(t)
	pc.Must("repo", "add", "all", e.URL+"/helm/all", "--username", "x", "--password", e.AdminKey)
	dest := t.TempDir()
	pc.Must("pull", "all/alpha", "--version", "0.1.0", "-d", dest)
	same("helm pull all/alpha 0.1.0", filepath.Join(dest, "alpha-0.1.0.tgz"), filepath.Join(work, "alpha-0.1.0.tgz"))
	// …and over OCI.
	host := strings.TrimPrefix(e.URL, "http://")
	pc.Must("registry", "login", host, "--username", "admin", "--password", e.AdminKey, "--plain-http")
	dest = t.TempDir()
	pc.Must("pull", "oci://"+host+"/all/beta", "--version", "1.0.0+build.1", "-d", dest, "--plain-http")
	same("helm pull oci://chartctl/all/beta", filepath.Join(dest, "beta-1.0.0+build.1.tgz"), filepath.Join(work, "beta-1.0.0+build.1.tgz"))

	// Without a catalog: a namespace cannot be listed (decision 15), and
	// the sync says which form to use; one chart repository works.
	e.createMirror(t, "ns", cred("oci://"+noCatalogHost+"/charts"))
	if _, err := e.Syncer.Sync(t.Context(), "ns"); err == nil {
		t.Fatal("a namespace mirror of a registry without a catalog synced")
	}
	if m := e.repo(t, "ns").Mirror; m.Status != "error" || !strings.Contains(m.Error, "has no /v2/_catalog") ||
		!strings.Contains(m.Error, "mirror each chart as oci://"+noCatalogHost+"/charts/CHART") {
		t.Errorf("status of a namespace mirror without a catalog: %+v", m)
	}
	e.createMirror(t, "ghcr-style", cred("oci://"+noCatalogHost+"/charts/beta"))
	if _, err := e.Syncer.Sync(t.Context(), "ghcr-style"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.versions(t, "ghcr-style"), " "); got != "beta@1.0.0+build.1" {
		t.Errorf("oci://HOST/charts/beta without a catalog mirrored %s", got)
	}

	// A wrong password: the status says to check the credential.
	e.createMirror(t, "badpass", map[string]string{"url": "oci://" + dist.Host + "/charts/alpha", "username": "ci", "password": "wrong"})
	if _, err := e.Syncer.Sync(t.Context(), "badpass"); err == nil {
		t.Fatal("a sync with a wrong password succeeded")
	}
	if m := e.repo(t, "badpass").Mirror; m.Status != "error" || !strings.Contains(m.Error, "check the mirror's username and password") {
		t.Errorf("status with a wrong password: %+v", m)
	}
}

// TestMirrorOCIRefusesPrivateAndBadURLs: an oci:// upstream at a literal
// loopback address is refused when saved unless the server allows
// private upstreams; malformed oci:// URLs are refused naming mirror.url.
func TestMirrorOCIRefusesPrivateAndBadURLs(t *testing.T) {
	e := setup(t, envOptions{denyPrivate: true})
	for url, want := range map[string]string{
		"oci://127.0.0.1:5000/charts/alpha": "private or loopback address",
		"oci://registry.example.com":        "is not of the form oci://HOST/PATH",
		"oci://registry.example.com/Charts": "upper-case letters",
		"oci://u:p@registry.example.com/c":  "must not carry credentials",
	} {
		r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, map[string]any{"name": "m", "mirror": map[string]string{"url": url}})
		if r.StatusCode != 400 || r.ErrorCode() != "invalid_parameter" || !strings.Contains(string(r.Body), want) || !strings.Contains(string(r.Body), `"parameter":"mirror.url"`) {
			t.Errorf("%s: %d %s", url, r.StatusCode, r.Body)
		}
	}
}
