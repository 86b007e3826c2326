package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// regzip returns archive re-encoded: the same tar entries with other
// modification times, compressed at another level, as a second
// `helm package` run produces.
func regzip(t *testing.T, archive []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		hd.ModTime = hd.ModTime.Add(1e9 * 3600)
		if err := tw.WriteHeader(hd); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(buf.Bytes(), archive) {
		t.Fatal("re-encoding gave the same bytes")
	}
	return buf.Bytes()
}

func uploaded(t *testing.T, r *testkit.Response) client.ChartUpload {
	t.Helper()
	if r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	var got envelope[client.ChartUpload]
	r.JSON(t, &got)
	return got.Data
}

// errorMessage returns the message of an error response with status.
func errorMessage(t *testing.T, r *testkit.Response, status int) string {
	t.Helper()
	expectError(t, r, status, statusCode(status), "")
	var e errBody
	r.JSON(t, &e)
	return e.Error.Message
}

func statusCode(status int) string {
	switch status {
	case 404:
		return chartctl.ENOTFOUND
	case 409:
		return chartctl.ECONFLICT
	}
	return chartctl.EINTERNAL
}

// Regression (issue 12): an archive of the same chart in other gzip bytes
// was refused with 409; now it is 200 with the stored record, and other
// content stays 409.
func TestReuploadSameContentOtherBytes(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "")
	first := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	stored := uploaded(t, s.Upload(t, "r", s.AdminKey, first, ""))
	again := uploaded(t, s.Upload(t, "r", s.AdminKey, regzip(t, first), ""))
	if again.Digest != stored.Digest || !again.CreatedAt.Equal(stored.CreatedAt) {
		t.Fatalf("re-upload returned %+v, want the stored %+v", again, stored)
	}
	changed := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0", Description: "changed"})
	msg := errorMessage(t, s.Upload(t, "r", s.AdminKey, changed, ""), 409)
	if !strings.Contains(msg, "different content") {
		t.Fatalf("message = %q", msg)
	}
	archive := s.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0/archive", s.AdminKey, nil)
	if !bytes.Equal(archive.Body, first) {
		t.Fatal("the stored archive changed")
	}
}

// The review's sequence with the real Helm 4 client: `helm package` of one
// directory twice, both uploaded.
func TestReuploadTwoHelmPackageRuns(t *testing.T) {
	bin := os.Getenv("CHARTCTL_HELM4")
	if _, err := os.Stat(bin); bin == "" || err != nil {
		if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
			t.Fatal("CHARTCTL_HELM4 is not set to a helm binary (run make tools)")
		}
		t.Skip("no helm binary: set CHARTCTL_HELM4 (make tools)")
	}
	dir := filepath.Join(t.TempDir(), "app")
	for name, content := range map[string]string{
		// Comments and key order that `helm package` does not keep.
		"Chart.yaml":                "# The app.\nname: app\napiVersion: v2\nversion: 1.0.0\ndescription: An app\n",
		"values.yaml":               "replicaCount: 1\n",
		"templates/deployment.yaml": "kind: Deployment\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkg := func() []byte {
		out := t.TempDir()
		cmd := exec.Command(bin, "package", dir, "-d", out)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm package: %v\n%s", err, b)
		}
		b, err := os.ReadFile(filepath.Join(out, "app-1.0.0.tgz"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := pkg()
	second := helmRepackage(t, dir, first, pkg)

	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "")
	stored := uploaded(t, s.Upload(t, "r", s.AdminKey, first, ""))
	again := uploaded(t, s.Upload(t, "r", s.AdminKey, second, ""))
	if again.Digest != stored.Digest {
		t.Fatalf("second helm package run: digest %s, want the stored %s", again.Digest, stored.Digest)
	}
	// chartctl's own packaging of the directory (chart push ./app) keeps
	// Chart.yaml as written; Helm writes it anew. Same chart: idempotent.
	archive, err := chart.Package(dir, t.TempDir(), chart.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if viaCLI := uploaded(t, s.Upload(t, "r", s.AdminKey, ours, "")); viaCLI.Digest != stored.Digest {
		t.Fatalf("chartctl's packaging of the same directory: digest %s, want the stored %s", viaCLI.Digest, stored.Digest)
	}
	var versions envelope[[]client.Chart]
	s.Do(t, http.MethodGet, "/v1/repositories/r/charts/app", s.AdminKey, nil).JSON(t, &versions)
	if len(versions.Data) != 1 {
		t.Fatalf("versions = %+v", versions.Data)
	}
}

// Regression (issue 12): 1.0.0, v1.0.0 and 1.0.0+build were stored as
// three versions.
func TestSemverEqualVersionsHTTP(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.AllowOverwrite = true })
	s.MustRepo(t, "r", "")
	uploaded(t, s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""))
	for _, v := range []string{"v1.0.0", "1.0.0+build.7"} {
		for _, q := range []string{"", "?force=true"} {
			msg := errorMessage(t, s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: v}), q), 409)
			if !strings.Contains(msg, "version 1.0.0 already exists") {
				t.Fatalf("%s%s: message %q does not name the stored version", v, q, msg)
			}
		}
	}
	var versions envelope[[]client.Chart]
	s.Do(t, http.MethodGet, "/v1/repositories/r/charts/app", s.AdminKey, nil).JSON(t, &versions)
	if len(versions.Data) != 1 {
		t.Fatalf("versions = %+v", versions.Data)
	}
	idx := s.Do(t, http.MethodGet, "/helm/r/index.yaml", s.AdminKey, nil)
	if bytes.Contains(idx.Body, []byte("v1.0.0")) || bytes.Contains(idx.Body, []byte("build.7")) {
		t.Fatalf("index lists a SemVer-equal version:\n%s", idx.Body)
	}
}

// gatedBeforePut holds the next chart upload just before it reaches the
// store, so a test can delete and re-create its repository meanwhile.
type gatedBeforePut struct {
	chartctl.Store
	hold atomic.Pointer[gate]
}

func (g *gatedBeforePut) PutChartVersion(ctx context.Context, cv *chartctl.ChartVersion, opts chartctl.PutVersionOptions) (*chartctl.ChartVersion, bool, []string, error) {
	if gt := g.hold.Swap(nil); gt != nil {
		close(gt.committed)
		<-gt.release
	}
	return g.Store.PutChartVersion(ctx, cv, opts)
}

// Regression (issue 12): an upload in flight when its repository was
// deleted and the name re-created landed in the new repository.
func TestUploadDuringDeleteAndRecreate(t *testing.T) {
	g := &gatedBeforePut{}
	s := testkit.StartServer(t, func(srv *server.Server) { g.Store = srv.Store; srv.Store = g })
	s.MustRepo(t, "r", "")
	gt := &gate{committed: make(chan struct{}), release: make(chan struct{})}
	g.hold.Store(gt)
	done := make(chan *testkit.Response)
	go func() {
		done <- s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), "")
	}()
	<-gt.committed
	if r := s.Do(t, http.MethodDelete, "/v1/repositories/r", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	s.MustRepo(t, "r", "public")
	close(gt.release)
	errorMessage(t, <-done, 404)
	var versions envelope[[]client.Chart]
	s.Do(t, http.MethodGet, "/v1/repositories/r/charts", s.AdminKey, nil).JSON(t, &versions)
	if len(versions.Data) != 0 {
		t.Fatalf("the new repository holds the old upload: %+v", versions.Data)
	}
	if idx := s.Do(t, http.MethodGet, "/helm/r/index.yaml", "", nil); bytes.Contains(idx.Body, []byte("app")) {
		t.Fatalf("index.yaml of the new repository lists the old upload:\n%s", idx.Body)
	}
}

// Regression (issue 12): a deleted repository's name went at once to
// anyone, so Helm clients still using its URL pulled a stranger's charts.
func TestDeletedRepositoryNameGraceHTTP(t *testing.T) {
	s := testkit.StartServer(t)
	alice := s.MustKey(t, s.MustUser(t, "alice@example.com", false), chartctl.AllScopes...)
	mallory := s.MustKey(t, s.MustUser(t, "mallory@example.com", false), chartctl.AllScopes...)
	create := func(tok string) *testkit.Response {
		return s.DoJSON(t, http.MethodPost, "/v1/repositories", tok, map[string]string{"name": "charts", "visibility": "public"})
	}
	if r := create(alice); r.StatusCode != 200 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, "/v1/repositories/charts", alice, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if msg := errorMessage(t, create(mallory), 409); msg != `The name "charts" is not available.` {
		t.Fatalf("message = %q", msg)
	}
	if r := create(alice); r.StatusCode != 200 {
		t.Fatalf("the owner re-creates at once: %d %s", r.StatusCode, r.Body)
	}
}

// Regression (issue 12): creating a repository, organization or team
// whose name a private resource holds said what held it.
func TestNameConflictsConfirmNothing(t *testing.T) {
	s := testkit.StartServer(t)
	alice := s.MustKey(t, s.MustUser(t, "alice@example.com", false), chartctl.AllScopes...)
	bob := s.MustKey(t, s.MustUser(t, "bob@example.com", false), chartctl.AllScopes...)
	for _, r := range []*testkit.Response{
		s.DoJSON(t, http.MethodPost, "/v1/repositories", alice, map[string]string{"name": "secret-repo"}),
		s.DoJSON(t, http.MethodPost, "/v1/organizations", alice, map[string]string{"name": "secret-org"}),
		s.DoJSON(t, http.MethodPost, "/v1/teams", alice, map[string]string{"name": "secret-team", "organization": "secret-org"}),
		s.DoJSON(t, http.MethodPost, "/v1/organizations", bob, map[string]string{"name": "bobs"}),
	} {
		if r.StatusCode != 200 {
			t.Fatalf("setup: %d %s", r.StatusCode, r.Body)
		}
	}
	for _, tc := range []struct {
		path string
		body map[string]string
		name string
	}{
		{"/v1/repositories", map[string]string{"name": "secret-repo"}, "secret-repo"},
		{"/v1/organizations", map[string]string{"name": "secret-org"}, "secret-org"},
		{"/v1/teams", map[string]string{"name": "secret-team", "organization": "bobs"}, "secret-team"},
	} {
		msg := errorMessage(t, s.DoJSON(t, http.MethodPost, tc.path, bob, tc.body), 409)
		if want := `The name "` + tc.name + `" is not available.`; msg != want {
			t.Fatalf("POST %s: message %q, want %q", tc.path, msg, want)
		}
	}
}

// helmRepackage runs pkg again after giving every file of dir another
// modification time (Helm 4 stamps the files' mtimes into the archive, so
// a fresh checkout of the same chart packages to other bytes), and checks
// that the bytes did change.
func helmRepackage(t *testing.T, dir string, first []byte, pkg func() []byte) []byte {
	t.Helper()
	later := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, later, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	second := pkg()
	if bytes.Equal(first, second) {
		t.Fatal("two helm package runs gave the same bytes; the test needs different ones")
	}
	return second
}
