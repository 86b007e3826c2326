package chart

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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
