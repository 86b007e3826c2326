package importer_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/testkit"
)

// helmRepo is a static Helm repository made by the real `helm package`
// and `helm repo index`, served by two test HTTP servers: the main one
// (basic auth required) lists alpha with relative URLs below pkgs/, and
// beta with an absolute URL on the second server, which records whether
// any credential reached it.
type helmRepo struct {
	URL       string
	Dir       string
	Index     map[string][]indexEntry
	leakedMu  sync.Mutex
	leaked    bool
	otherHits int
}

type indexEntry struct {
	Version string    `json:"version"`
	Created time.Time `json:"created"`
	Digest  string    `json:"digest"`
	URLs    []string  `json:"urls"`
}

func newHelmRepo(t *testing.T) *helmRepo {
	t.Helper()
	helm := testkit.HelmBinary(t)
	work := t.TempDir()
	mainDir := filepath.Join(t.TempDir(), "main")
	otherDir := filepath.Join(t.TempDir(), "other")
	for _, d := range []string{filepath.Join(mainDir, "pkgs"), otherDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testkit.RunHelm(t, helm, work, "create", "alpha")
	testkit.RunHelm(t, helm, work, "create", "beta")
	testkit.RunHelm(t, helm, work, "package", "alpha", "--version", "0.1.0", "-d", filepath.Join(mainDir, "pkgs"))
	testkit.RunHelm(t, helm, work, "package", "alpha", "--version", "0.2.0", "-d", filepath.Join(mainDir, "pkgs"))
	testkit.RunHelm(t, helm, work, "package", "beta", "--version", "1.0.0", "-d", otherDir)
	// A provenance file beside one archive, where Helm looks for it.
	if err := os.WriteFile(filepath.Join(mainDir, "pkgs", "alpha-0.2.0.tgz.prov"), []byte("-----BEGIN PGP SIGNED MESSAGE-----\nalpha 0.2.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := &helmRepo{Dir: mainDir}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.leakedMu.Lock()
		r.otherHits++
		if req.Header.Get("Authorization") != "" {
			r.leaked = true
		}
		r.leakedMu.Unlock()
		http.FileServer(http.Dir(otherDir)).ServeHTTP(w, req)
	}))
	t.Cleanup(other.Close)
	testkit.RunHelm(t, helm, work, "repo", "index", otherDir, "--url", other.URL)
	testkit.RunHelm(t, helm, work, "repo", "index", mainDir, "--merge", filepath.Join(otherDir, "index.yaml"))

	b, err := os.ReadFile(filepath.Join(mainDir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Entries map[string][]indexEntry `json:"entries"`
	}
	if err := yaml.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	r.Index = idx.Entries
	if !strings.HasPrefix(idx.Entries["alpha"][0].URLs[0], "pkgs/") || !strings.HasPrefix(idx.Entries["beta"][0].URLs[0], other.URL) {
		t.Fatalf("the index does not have the relative and absolute URLs this test needs:\n%s", b)
	}
	main := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "reader" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.FileServer(http.Dir(mainDir)).ServeHTTP(w, req)
	}))
	t.Cleanup(main.Close)
	r.URL = main.URL
	return r
}

func newClient(t *testing.T, ts *testkit.Server, key string) *client.Client {
	t.Helper()
	c, err := client.New(ts.URL, client.WithToken(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(items []importer.Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.Name+"@"+it.Version)
	}
	sort.Strings(out)
	return out
}

func TestImportHelmRepository(t *testing.T) {
	repo := newHelmRepo(t)
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	src, err := importer.OpenSource(repo.URL+"/index.yaml", importer.SourceOptions{Auth: importer.Auth{Username: "reader", Password: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	im := &importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "stable", KeepCreated: true}
	res, err := im.Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(res.Imported), " "); got != "alpha@0.1.0 alpha@0.2.0 beta@1.0.0" || len(res.Failed) != 0 || len(res.Warnings) != 0 {
		t.Fatalf("imported %s; failed %+v; warnings %v", got, res.Failed, res.Warnings)
	}
	if repo.leaked {
		t.Error("the source's credential was sent to the other host an absolute chart URL named")
	}
	if repo.otherHits == 0 {
		t.Error("the absolute chart URL was not followed")
	}
	ctx := context.Background()
	for name, entries := range repo.Index {
		for _, e := range entries {
			cv, err := ts.Store.ChartVersion(ctx, "stable", name, e.Version)
			if err != nil {
				t.Fatalf("%s %s: %v", name, e.Version, err)
			}
			if strings.TrimPrefix(cv.Digest, "sha256:") != e.Digest {
				t.Errorf("%s %s: digest %s, index says %s", name, e.Version, cv.Digest, e.Digest)
			}
			if !cv.CreatedAt.Equal(e.Created) {
				t.Errorf("%s %s: created %s, source says %s", name, e.Version, cv.CreatedAt, e.Created)
			}
			wantProv := name == "alpha" && e.Version == "0.2.0"
			if (cv.ProvDigest != "") != wantProv {
				t.Errorf("%s %s: provenance digest %q, want one: %v", name, e.Version, cv.ProvDigest, wantProv)
			}
		}
	}

	// A re-run imports nothing.
	res, err = im.Run(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imported) != 0 || len(res.Skipped) != 3 || len(res.Failed) != 0 {
		t.Fatalf("re-run: imported %v, skipped %v, failed %v", names(res.Imported), names(res.Skipped), res.Failed)
	}
	for _, s := range res.Skipped {
		if s.Reason != "already present" {
			t.Errorf("skipped %s %s because %q", s.Name, s.Version, s.Reason)
		}
	}
}

func TestImportHelmRepositoryWrongPassword(t *testing.T) {
	repo := newHelmRepo(t)
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	src, err := importer.OpenSource(repo.URL, importer.SourceOptions{Auth: importer.Auth{Username: "reader", Password: "wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "stable"}).Run(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "--password-stdin") {
		t.Fatalf("err = %v, want a 401 naming the credential flags", err)
	}
}

func TestImportResumesAfterInterruption(t *testing.T) {
	repo := newHelmRepo(t)
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	src, err := importer.OpenSource(repo.URL, importer.SourceOptions{Auth: importer.Auth{Username: "reader", Password: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	im := &importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "stable", KeepCreated: true}
	// Interrupt the run as the second version starts uploading.
	im.Progress = func(ev importer.Event) {
		if ev.State == importer.StateImporting && ev.N == 2 {
			cancel()
		}
	}
	res, err := im.Run(ctx, src)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v", err)
	}
	if len(res.Imported) != 1 || len(res.Failed) != 0 {
		t.Fatalf("interrupted run imported %v, failed %+v", names(res.Imported), res.Failed)
	}
	first := res.Imported[0]

	im.Progress = nil
	res, err = im.Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imported) != 2 || len(res.Skipped) != 1 || res.Skipped[0] != (importer.Item{Name: first.Name, Version: first.Version, Reason: "already present"}) {
		t.Fatalf("resumed run imported %v, skipped %+v", names(res.Imported), res.Skipped)
	}
	cvs, err := ts.Store.IndexEntries(context.Background(), "stable")
	if err != nil || len(cvs) != 3 {
		t.Fatalf("the repository holds %d versions (%v), want 3", len(cvs), err)
	}
}

func TestImportChartMuseumDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a1 := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	a2 := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.1.0"})
	db := testkit.MakeChart(t, testkit.Chart{Name: "db", Version: "2.0.0+build.1"})
	write("app-1.0.0.tgz", a1)
	write("app-1.0.0.tgz.prov", []byte("signed app 1.0.0\n"))
	write("app-1.1.0.tgz", a2)
	dbPath := write("db-2.0.0+build.1.tgz", db)
	write("broken-0.1.0.tgz", []byte("not gzip"))
	write("README.md", []byte("ignored"))
	// ChartMuseum's cache of the index gives app 1.0.0's created time; db
	// has none there, so its file's modification time is used.
	write("index-cache.yaml", []byte("apiVersion: v1\nentries:\n  app:\n  - name: app\n    version: 1.0.0\n    created: \"2021-03-04T05:06:07.123456789Z\"\n"))
	dbTime := time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(dbPath, dbTime, dbTime); err != nil {
		t.Fatal(err)
	}

	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	src, err := importer.OpenSource(dir, importer.SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	im := &importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "stable", KeepCreated: true}
	res, err := im.Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(res.Imported), " "); got != "app@1.0.0 app@1.1.0 db@2.0.0+build.1" {
		t.Errorf("imported %s", got)
	}
	if len(res.Failed) != 1 || res.Failed[0].Name != "broken-0.1.0" || !strings.HasSuffix(res.Failed[0].Reason, "broken-0.1.0.tgz is not a valid chart archive: not gzip-compressed") {
		t.Errorf("failed %+v, want broken-0.1.0.tgz named as not a chart, and why", res.Failed)
	}
	// The reason is for a person: not the domain error's debugging form.
	if len(res.Failed) == 1 && strings.Contains(res.Failed[0].Reason, "code=") {
		t.Errorf("failure reason shows internals: %q", res.Failed[0].Reason)
	}
	ctx := context.Background()
	check := func(name, version string, created time.Time, blob []byte, prov bool) {
		t.Helper()
		cv, err := ts.Store.ChartVersion(ctx, "stable", name, version)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(blob)
		if strings.TrimPrefix(cv.Digest, "sha256:") != hex.EncodeToString(sum[:]) {
			t.Errorf("%s %s: digest %s", name, version, cv.Digest)
		}
		if !cv.CreatedAt.Equal(created) {
			t.Errorf("%s %s: created %s, want %s", name, version, cv.CreatedAt, created)
		}
		if (cv.ProvDigest != "") != prov {
			t.Errorf("%s %s: provenance %q", name, version, cv.ProvDigest)
		}
	}
	check("app", "1.0.0", time.Date(2021, 3, 4, 5, 6, 7, 123456789, time.UTC), a1, true)
	check("db", "2.0.0+build.1", dbTime, db, false)

	res, err = im.Run(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imported) != 0 || len(res.Skipped) != 3 || len(res.Failed) != 1 {
		t.Errorf("re-run imported %v, skipped %v, failed %+v", names(res.Imported), names(res.Skipped), res.Failed)
	}
}

// A credential without the admin scope imports too, stamping versions
// with the current time, and the result says so once.
func TestImportWithoutAdminKeepsGoing(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if err := os.WriteFile(filepath.Join(dir, "app-"+v+".tgz"), testkit.MakeChart(t, testkit.Chart{Name: "app", Version: v}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	u := ts.MustUser(t, "dev@example.com", false)
	key := ts.MustKey(t, u, chartctl.AllScopes...)
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories", key, map[string]string{"name": "mine"}); r.StatusCode != 200 {
		t.Fatalf("create repo: %d %s", r.StatusCode, r.Body)
	}
	src := &importer.DirSource{Dir: dir}
	res, err := (&importer.Importer{Client: newClient(t, ts, key), Repo: "mine", KeepCreated: true}).Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imported) != 2 || len(res.Failed) != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "admin scope") {
		t.Fatalf("imported %v, failed %+v, warnings %q", names(res.Imported), res.Failed, res.Warnings)
	}
}

func TestImportUnknownRepository(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app-1.0.0.tgz"), testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := testkit.StartServer(t)
	_, err := (&importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "nope"}).Run(context.Background(), &importer.DirSource{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "chartctl repo create nope") {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenSourceErrors(t *testing.T) {
	for _, ref := range []string{"ftp://x/y", "oci://hostonly", filepath.Join(t.TempDir(), "missing")} {
		if _, err := importer.OpenSource(ref, importer.SourceOptions{}); err == nil {
			t.Errorf("OpenSource(%q) succeeded", ref)
		}
	}
}
