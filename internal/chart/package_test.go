package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestPackageHonoursHelmignore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkout") // the directory name differs from the chart's
	files := map[string]string{
		"Chart.yaml":                  "apiVersion: v2\nname: web\nversion: 1.2.3\ndescription: A web app\n",
		"values.yaml":                 "replicas: 1\n",
		"templates/deploy.yaml":       "kind: Deployment\n",
		"templates/.hidden":           "dotfiles in templates/ are ignored by default\n",
		".helmignore":                 "*.bak\nsecrets/\n",
		"notes.bak":                   "ignored by pattern\n",
		"secrets/token":               "ignored directory\n",
		"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/templates/a.yaml": "a: 1\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := Package(dir, t.TempDir(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(out) != "web-1.2.3.tgz" {
		t.Fatalf("archive = %s", out)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hd, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hd.Name)
	}
	if names[0] != "web/Chart.yaml" {
		t.Fatalf("Chart.yaml is not first: %v", names)
	}
	sort.Strings(names)
	got := strings.Join(names, " ")
	want := "web/.helmignore web/Chart.yaml web/charts/sub/Chart.yaml web/charts/sub/templates/a.yaml web/templates/deploy.yaml web/values.yaml"
	if got != want {
		t.Fatalf("entries = %s\nwant      %s", got, want)
	}
}

func TestPackageRejectsInvalidChart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: web\nversion: not-a-version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Package(dir, t.TempDir(), DefaultLimits()); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Package(t.TempDir(), t.TempDir(), DefaultLimits()); err == nil || !strings.Contains(err.Error(), "Chart.yaml") {
		t.Fatalf("empty dir: err = %v", err)
	}
}

// writeChartDir writes files under a new directory and returns it.
func writeChartDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func packageBytes(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := Package(dir, t.TempDir(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Regression (issue 12): packaging stamped the current time into every
// entry, so `chartctl chart push ./dir` twice a second apart uploaded two
// different archives of one version and the second got 409.
func TestPackageIsReproducible(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := writeChartDir(t, map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"values.yaml":           "replicas: 1\n",
		"templates/deploy.yaml": "kind: Deployment\n",
		"templates/svc.yaml":    "kind: Service\n",
	})
	first := packageBytes(t, dir)

	// What a second push later, or a fresh checkout, changes: every mtime,
	// and the permission bits.
	later := time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, later, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "values.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	second := packageBytes(t, dir)
	if !bytes.Equal(first, second) {
		t.Fatalf("packaging the same directory twice gave different bytes (%d and %d)", len(first), len(second))
	}

	gz, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Fatalf("gzip header name=%q mtime=%v, want neither", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !hd.ModTime.Equal(time.Unix(0, 0)) || hd.Mode != 0o644 || hd.Uid != 0 || hd.Gid != 0 || hd.Uname != "" || hd.Gname != "" {
			t.Fatalf("%s: mtime=%v mode=%o uid=%d gid=%d uname=%q gname=%q", hd.Name, hd.ModTime, hd.Mode, hd.Uid, hd.Gid, hd.Uname, hd.Gname)
		}
	}
}

func TestPackageHonoursSourceDateEpoch(t *testing.T) {
	dir := writeChartDir(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n"})
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	gz, err := gzip.NewReader(bytes.NewReader(packageBytes(t, dir)))
	if err != nil {
		t.Fatal(err)
	}
	hd, err := tar.NewReader(gz).Next()
	if err != nil {
		t.Fatal(err)
	}
	if !hd.ModTime.Equal(time.Unix(1700000000, 0)) {
		t.Fatalf("mtime = %v", hd.ModTime)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := Package(dir, t.TempDir(), DefaultLimits()); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Fatalf("err = %v", err)
	}
}

// A chart whose Chart.yaml lists dependencies that are not in charts/ is
// refused, as `helm package` refuses it: pushed, it would fail every
// install ("found in Chart.yaml, but missing in charts/ directory"), and
// the version could not be pushed again fixed.
func TestPackageChecksDependencies(t *testing.T) {
	chartYAML := "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n" +
		"  - name: db\n    version: 2.0.0\n    repository: https://charts.example.com\n" +
		"  - name: cache\n    version: 1.x\n    repository: https://charts.example.com\n    alias: redis\n"
	dir := writeChartDir(t, map[string]string{"Chart.yaml": chartYAML, "values.yaml": "a: 1\n"})
	_, err := Package(dir, t.TempDir(), DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "found in Chart.yaml, but missing in charts/ directory: db, cache") || !strings.Contains(err.Error(), "helm dependency build") {
		t.Fatalf("missing dependencies: err = %v", err)
	}

	// One as a directory, the other as an archive (what `helm dependency
	// build` writes): packaged.
	sub := writeChartDir(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: cache\nversion: 1.4.0\n"})
	cache := packageBytes(t, sub)
	dir = writeChartDir(t, map[string]string{
		"Chart.yaml":             chartYAML,
		"charts/db/Chart.yaml":   "apiVersion: v2\nname: db\nversion: 2.0.0\n",
		"charts/cache-1.4.0.tgz": string(cache),
	})
	if _, err := Package(dir, t.TempDir(), DefaultLimits()); err != nil {
		t.Fatalf("dependencies present: %v", err)
	}

	// A subchart directory counts by the name in its Chart.yaml, not by the
	// directory's name; an ignored one does not count.
	dir = writeChartDir(t, map[string]string{
		"Chart.yaml":                 chartYAML,
		".helmignore":                "charts/cache-1.4.0.tgz\n",
		"charts/database/Chart.yaml": "apiVersion: v2\nname: db\nversion: 2.0.0\n",
		"charts/cache-1.4.0.tgz":     string(cache),
	})
	if _, err := Package(dir, t.TempDir(), DefaultLimits()); err == nil || !strings.Contains(err.Error(), "missing in charts/ directory: cache") {
		t.Fatalf("ignored dependency: err = %v", err)
	}
}
