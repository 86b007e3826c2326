package mirror_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestMirrorFollowsUpstream: a static Helm repository made by the real
// `helm package` and `helm repo index` (one chart with a relative URL and
// a provenance file, one with an absolute URL on another host, basic auth
// on the first) is mirrored; the real Helm client pulls from the mirror
// what the upstream holds, byte for byte; a version added upstream
// appears after the next sync; with the upstream down the status says so
// and Helm still pulls from the mirror.
func TestMirrorFollowsUpstream(t *testing.T) {
	helm := testkit.NewHelm(t)
	work := t.TempDir()
	mainDir, otherDir := filepath.Join(t.TempDir(), "main"), filepath.Join(t.TempDir(), "other")
	for _, d := range []string{filepath.Join(mainDir, "pkgs"), otherDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) { testkit.RunHelm(t, helm.Bin, work, args...) }
	run("create", "alpha")
	run("create", "beta")
	run("package", "alpha", "--version", "0.1.0", "-d", filepath.Join(mainDir, "pkgs"))
	run("package", "beta", "--version", "1.0.0", "-d", otherDir)
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----\nalpha 0.1.0\n")
	if err := os.WriteFile(filepath.Join(mainDir, "pkgs", "alpha-0.1.0.tgz.prov"), prov, 0o644); err != nil {
		t.Fatal(err)
	}
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		http.FileServer(http.Dir(otherDir)).ServeHTTP(w, req)
	}))
	t.Cleanup(other.Close)
	var down atomic.Bool
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if down.Load() {
			http.Error(w, "down for maintenance", http.StatusBadGateway)
			return
		}
		if u, p, ok := req.BasicAuth(); !ok || u != "reader" || p != "upstream-pass" {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.FileServer(http.Dir(mainDir)).ServeHTTP(w, req)
	}))
	t.Cleanup(upstream.Close)
	run("repo", "index", otherDir, "--url", other.URL)
	run("repo", "index", mainDir, "--merge", filepath.Join(otherDir, "index.yaml"))
	idx := readIndex(t, filepath.Join(mainDir, "index.yaml"))
	if !strings.HasPrefix(idx["alpha"][0].URLs[0], "pkgs/") || !strings.HasPrefix(idx["beta"][0].URLs[0], other.URL) {
		t.Fatalf("the index lacks the relative and absolute URLs this test needs: %+v", idx)
	}

	e := setup(t, envOptions{})
	e.createMirror(t, "mirror", map[string]string{"url": upstream.URL, "username": "reader", "password": "upstream-pass"})
	if _, err := e.Syncer.Sync(t.Context(), "mirror"); err != nil {
		t.Fatal(err)
	}
	if leaked.Load() {
		t.Error("the upstream's credential was sent to the other host of an absolute chart URL")
	}
	// Created times and digests as the upstream's index has them.
	mine := readIndexBytes(t, e.Do(t, "GET", "/helm/mirror/index.yaml", e.AdminKey, nil).Body)
	for name, want := range idx {
		got := mine[name]
		if len(got) != 1 || got[0].Digest != want[0].Digest || !got[0].Created.Truncate(time.Microsecond).Equal(want[0].Created.Truncate(time.Microsecond)) {
			t.Errorf("%s in the mirror's index = %+v, upstream %+v", name, got, want)
		}
	}
	if r := e.Do(t, "GET", "/helm/mirror/charts/alpha-0.1.0.tgz.prov", e.AdminKey, nil); r.StatusCode != 200 || !bytes.Equal(r.Body, prov) {
		t.Errorf("provenance file: %d %q", r.StatusCode, r.Body)
	}

	h := helm.Fresh(t)
	h.Must("repo", "add", "mirror", e.URL+"/helm/mirror", "--username", "x", "--password", e.AdminKey)
	pull := func(name, version string) {
		t.Helper()
		dest := t.TempDir()
		h.Must("pull", "mirror/"+name, "--version", version, "-d", dest)
		got, err := os.ReadFile(filepath.Join(dest, name+"-"+version+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(mainDir, "pkgs", name+"-"+version+".tgz")
		if name == "beta" {
			src = filepath.Join(otherDir, name+"-"+version+".tgz")
		}
		want, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("helm pull %s %s through the mirror differs from the upstream's archive", name, version)
		}
	}
	pull("alpha", "0.1.0")
	pull("beta", "1.0.0")

	// A version added upstream appears after the next sync.
	run("package", "alpha", "--version", "0.2.0", "-d", filepath.Join(mainDir, "pkgs"))
	run("repo", "index", mainDir, "--merge", filepath.Join(mainDir, "index.yaml"))
	if _, err := e.Syncer.Sync(t.Context(), "mirror"); err != nil {
		t.Fatal(err)
	}
	h.Must("repo", "update")
	if out := h.Must("search", "repo", "mirror/alpha", "--versions"); !strings.Contains(out, "0.2.0") {
		t.Fatalf("helm search after the sync:\n%s", out)
	}
	pull("alpha", "0.2.0")

	// The upstream goes down: the status says so, Helm keeps pulling.
	down.Store(true)
	if _, err := e.Syncer.Sync(t.Context(), "mirror"); err == nil {
		t.Fatal("a sync of a down upstream succeeded")
	}
	m := e.repo(t, "mirror").Mirror
	if m.Status != "error" || !strings.Contains(m.Error, "502 Bad Gateway") || m.LastSyncAt == nil {
		t.Fatalf("status with the upstream down: %+v", m)
	}
	h.Must("repo", "update")
	pull("alpha", "0.1.0")
	pull("alpha", "0.2.0")
}

type indexEntry struct {
	Version string    `json:"version"`
	Digest  string    `json:"digest"`
	URLs    []string  `json:"urls"`
	Created time.Time `json:"created"`
}

func readIndex(t *testing.T, path string) map[string][]indexEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readIndexBytes(t, b)
}

func readIndexBytes(t *testing.T, b []byte) map[string][]indexEntry {
	t.Helper()
	var idx struct {
		Entries map[string][]indexEntry `json:"entries"`
	}
	if err := yaml.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index: %v\n%s", err, b)
	}
	return idx.Entries
}
