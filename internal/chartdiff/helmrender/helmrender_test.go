package helmrender_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/chartdiff/helmrender"
	"github.com/chartctl/chartctl/internal/sandbox"
	"github.com/chartctl/chartctl/internal/testkit"
)

const fixtures = "../testdata/"

func render(t *testing.T, dir string) *chartdiff.Rendering {
	t.Helper()
	return helmrender.Render(context.Background(), testkit.ArchiveDir(t, fixtures+dir), chart.DefaultLimits())
}

// TestRenderFindsImages: a chart without the annotation renders with its
// default values, for a Kubernetes version its kubeVersion allows; the
// images of its Deployment (containers and init containers) and CronJob
// are found, normalized, not those of other kinds or of a template its
// defaults switch off; manifests are named from the chart's root, without
// NOTES.txt or empty templates.
func TestRenderFindsImages(t *testing.T) {
	r := render(t, "api-1.0.0/api")
	if r.Unrenderable != "" {
		t.Fatalf("unrenderable: %s", r.Unrenderable)
	}
	want := []string{"docker.io/library/busybox:1.36", "ghcr.io/acme/api-migrate:2.4.1", "ghcr.io/acme/api:2.4.1"}
	if !reflect.DeepEqual(r.Images, want) {
		t.Fatalf("images = %q, want %q", r.Images, want)
	}
	var paths []string
	for p := range r.Manifests {
		paths = append(paths, p)
	}
	if !reflect.DeepEqual(sorted(paths), []string{"templates/cronjob.yaml", "templates/deployment.yaml"}) {
		t.Fatalf("manifests = %q", paths)
	}
	// The chart asks for >=1.25: the version rendered for satisfies it
	// and is the one the templates saw.
	if r.KubeVersion != "v1.25.0" || !strings.Contains(r.Manifests["templates/deployment.yaml"], `chartctl.example/kube: "v1.25.0"`) {
		t.Fatalf("kube version %q; deployment:\n%s", r.KubeVersion, r.Manifests["templates/deployment.yaml"])
	}
	if !strings.Contains(r.Manifests["templates/deployment.yaml"], "name: release-name-api") {
		t.Fatalf("the release is not named as helm template names it:\n%s", r.Manifests["templates/deployment.yaml"])
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestRenderUnrenderable: a chart that looks objects up in a cluster and
// one whose template fails with its defaults are unrenderable, each with
// its reason and nothing else.
func TestRenderUnrenderable(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"needs-cluster/needs-cluster", "looks up objects in a cluster (lookup)"},
		{"broken/broken", "database.host is required"},
	} {
		r := render(t, tc.dir)
		if !strings.Contains(r.Unrenderable, tc.want) || len(r.Images) != 0 || len(r.Manifests) != 0 {
			t.Errorf("%s: %+v, want unrenderable saying %q", tc.dir, r, tc.want)
		}
	}
	r := helmrender.Render(context.Background(), []byte("not a chart"), chart.DefaultLimits())
	if !strings.Contains(r.Unrenderable, "not a valid chart") {
		t.Errorf("garbage: %+v", r)
	}
	// A constraint no Kubernetes version meets.
	arch := testkit.MakeChart(t, testkit.Chart{Name: "future", Version: "1.0.0", Extra: "kubeVersion: \">=9.0.0\"\n"})
	r = helmrender.Render(context.Background(), arch, chart.DefaultLimits())
	if !strings.Contains(r.Unrenderable, `no Kubernetes version satisfies the chart's kubeVersion ">=9.0.0"`) {
		t.Errorf("kubeVersion >=9: %+v", r)
	}
}

// TestSubprocess runs the real chartctl-lint binary in render mode, as
// chartctl serve does: the answer crosses the pipe whole, and a chart
// past the time bound is unrenderable with the bound named.
func TestSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds chartctl-lint")
	}
	bin := filepath.Join(t.TempDir(), "chartctl-lint")
	build := exec.Command("go", "build", "-o", bin, "github.com/chartctl/chartctl/cmd/chartctl-lint")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build chartctl-lint: %v", err)
	}
	pool := sandbox.New(sandbox.Config{Args: []string{bin, "serve"}, Workers: 1, Timeout: chartdiff.DefaultRenderTimeout,
		Memory: chartdiff.DefaultRenderMemory, MaxAnswer: chartdiff.MaxRenderedBytes + 1<<20})
	defer pool.Close()
	run := chartdiff.Subprocess(pool)
	r, err := run(context.Background(), testkit.ArchiveDir(t, fixtures+"api-1.0.0/api"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Unrenderable != "" || len(r.Images) != 3 || len(r.Manifests) != 2 {
		t.Fatalf("child answered %+v", r)
	}
	r, err = run(context.Background(), testkit.ArchiveDir(t, fixtures+"needs-cluster/needs-cluster"))
	if err != nil || !strings.Contains(r.Unrenderable, "lookup") {
		t.Fatalf("needs-cluster: %+v, %v", r, err)
	}
	// A template that loops for longer than the bound: killed, and the
	// reason names the bound.
	slow := testkit.MakeChart(t, testkit.Chart{Name: "slow", Version: "1.0.0", Files: map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\ndata:\n{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\n"}})
	short := sandbox.New(sandbox.Config{Args: []string{bin, "serve"}, Workers: 1, Timeout: time.Second, Memory: chartdiff.DefaultRenderMemory})
	defer short.Close()
	bounded := chartdiff.Subprocess(short)
	r, err = bounded(context.Background(), slow)
	if err != nil || r.Unrenderable != "rendering took longer than 1s" {
		t.Fatalf("slow chart: %+v, %v", r, err)
	}
	// The killed worker's place takes a fresh one.
	r, err = bounded(context.Background(), testkit.ArchiveDir(t, fixtures+"api-1.0.0/api"))
	if err != nil || r.Unrenderable != "" || len(r.Manifests) != 2 {
		t.Fatalf("after the slow chart: %+v, %v", r, err)
	}
}
