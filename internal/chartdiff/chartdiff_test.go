package chartdiff

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mustFiles reads a chart directory as ReadFiles would give its archive.
func mustFiles(tb testing.TB, dir string) Files {
	tb.Helper()
	files := Files{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func TestCompareFixtureChart(t *testing.T) {
	from := mustFiles(t, "testdata/web-1.0.0/web")
	to := mustFiles(t, "testdata/web-1.1.0/web")
	res := Compare(from, to)

	var got []string
	for _, f := range res.Files {
		got = append(got, f.Status+" "+f.Path)
	}
	want := []string{
		"modified Chart.yaml",
		"modified README.md",
		"modified crds/webs.example.com.yaml",
		"modified templates/deployment.yaml",
		"added templates/ingress.yaml",
		"removed templates/metrics-svc.yaml",
		"modified values.schema.json",
		"modified values.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantValues := Values{
		Added: []string{
			"image.digest",
			"ingress.extraHosts[0].name",
			"ingress.extraHosts[0].path",
			`podAnnotations["prometheus.io/scrape"]`,
			"resources.limits.cpu",
			"service.ports.https",
		},
		Removed: []string{"metrics.enabled"},
		Changed: []ValueChange{
			{Key: "image.tag", From: "1.25.3", To: "1.27.0"},
			{Key: "replicaCount", From: float64(1), To: float64(2)},
			{Key: "service.type", From: "LoadBalancer", To: "ClusterIP"},
		},
	}
	if !reflect.DeepEqual(res.Values, wantValues) || res.ValuesError != "" {
		t.Fatalf("values = %+v (%q), want %+v", res.Values, res.ValuesError, wantValues)
	}
	for _, f := range res.Files {
		if f.Path == "Chart.yaml" {
			for _, l := range []string{"-    version: 2.13.0\n", "+    version: 2.14.1\n", "+  - name: redis\n"} {
				if !strings.Contains(f.Diff, l) {
					t.Errorf("Chart.yaml diff lacks the dependency change %q:\n%s", l, f.Diff)
				}
			}
		}
	}
}

// TestUnifiedAppliesWithPatch checks the unified text the way a user
// would use it: patch(1) turns every old file into the new one.
func TestUnifiedAppliesWithPatch(t *testing.T) {
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch(1) not installed")
	}
	from := mustFiles(t, "testdata/web-1.0.0/web")
	to := mustFiles(t, "testdata/web-1.1.0/web")
	dir := t.TempDir()
	for p, b := range from {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(patchBin, "-p1", "-s", "-E", "-d", dir)
	cmd.Stdin = strings.NewReader(Compare(from, to).Unified())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s", err, out)
	}
	if got := mustFiles(t, dir); !reflect.DeepEqual(got, to) {
		t.Fatalf("patched tree differs from the new version")
	}
}

func TestUnifiedHunks(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	b := strings.Replace(strings.Replace(a, "2\n", "two\n", 1), "19\n", "", 1) + "21"
	got := Unified("a/f", "b/f", a, b, 3)
	want := `--- a/f
+++ b/f
@@ -1,5 +1,5 @@
 1
-2
+two
 3
 4
 5
@@ -16,5 +16,5 @@
 16
 17
 18
-19
 20
+21
\ No newline at end of file
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if Unified("a", "b", a, a, 3) != "" {
		t.Fatal("equal texts have a diff")
	}
}

func TestCompareValuesEdges(t *testing.T) {
	v, msg := CompareValues([]byte("a: {}\nb: [1]\nc: x\n"), []byte("a: {k: 1}\nb: []\n"))
	// An empty map that gains a key reports only the key; a list emptied
	// reports only the item it lost.
	want := Values{Added: []string{"a.k"}, Removed: []string{"b[0]", "c"}}
	if msg != "" || !reflect.DeepEqual(v, want) {
		t.Fatalf("got %+v %q, want %+v", v, msg, want)
	}
	if _, msg := CompareValues([]byte("a: [\n"), nil); !strings.Contains(msg, "old values.yaml is not valid YAML") {
		t.Fatalf("invalid YAML: %q", msg)
	}
}

func TestImagesOf(t *testing.T) {
	md := []byte(`{"annotations":{"artifacthub.io/images":"- name: nginx\n  image: docker.io/bitnami/nginx:1.27.0\n- name: redis\n  image: bitnami/redis:7.2.4\n- name: busybox\n  image: busybox\n- name: dup\n  image: index.docker.io/bitnami/nginx:1.27.0\n"}}`)
	got := ImagesOf(md)
	want := Images{Source: ImagesAnnotation, Images: []string{"docker.io/bitnami/nginx:1.27.0", "docker.io/bitnami/redis:7.2.4", "docker.io/library/busybox"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got := ImagesOf([]byte(`{"name":"x"}`)); got.Source != ImagesPending || got.Images != nil || got.Error != "" {
		t.Fatalf("no annotation: %+v", got)
	}
	if got := ImagesOf([]byte(`{"annotations":{"artifacthub.io/images":"image: [unclosed"}}`)); got.Source != ImagesPending || got.Error == "" {
		t.Fatalf("bad annotation: %+v", got)
	}
	if got := ImagesOf([]byte(`{"annotations":{"artifacthub.io/images":"- image: 'UPPER/Case'"}}`)); !strings.Contains(got.Error, "UPPER/Case") {
		t.Fatalf("bad reference: %+v", got)
	}
}

func TestImageQueryMatch(t *testing.T) {
	cases := []struct {
		q, img string
		want   bool
	}{
		{"nginx", "docker.io/library/nginx:1.25.3", true},
		{"nginx", "docker.io/library/nginx", true},
		{"nginx", "docker.io/bitnami/nginx:1.25.3", false},
		{"nginx:1.25", "docker.io/library/nginx:1.25.3", true},
		{"nginx:1.25", "docker.io/library/nginx:1.25-alpine", true},
		{"nginx:1.25", "docker.io/library/nginx:1.25", true},
		{"nginx:1.25", "docker.io/library/nginx:1.250", false},
		{"nginx:1.25", "docker.io/library/nginx:1.26.0", false},
		{"docker.io/library/nginx:1.25.3", "docker.io/library/nginx:1.25.3", true},
		{"bitnami/nginx", "docker.io/bitnami/nginx:1.27.0", true},
		{"ghcr.io/org/app", "ghcr.io/org/app:v1", true},
		{"ghcr.io/org/app", "docker.io/org/app:v1", false},
		{"nginx@sha256:" + strings.Repeat("a", 64), "docker.io/library/nginx:1@sha256:" + strings.Repeat("a", 64), true},
		{"nginx@sha256:" + strings.Repeat("a", 64), "docker.io/library/nginx:1", false},
	}
	for _, c := range cases {
		q, err := ParseImageQuery(c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := q.Match(c.img); got != c.want {
			t.Errorf("%s matches %s = %v, want %v", c.q, c.img, got, c.want)
		}
	}
	if _, err := ParseImageQuery("Not A Ref"); err == nil {
		t.Error("an invalid reference parsed")
	}
}
