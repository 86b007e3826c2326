package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/sandbox"
	"github.com/chartctl/chartctl/internal/testkit"
)

// mustBuild builds chartctl-lint into a temporary directory.
func mustBuild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds chartctl-lint")
	}
	bin := filepath.Join(t.TempDir(), "chartctl-lint")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build chartctl-lint: %v", err)
	}
	return bin
}

// oneShot runs the binary once per chart, as serve did before the pool.
func oneShot(t *testing.T, bin string, archive []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(archive)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chartctl-lint %v: %v", args, err)
	}
	return out
}

// testCharts are the charts of chartdiff's testdata (rendering, images, a
// template that fails, one that looks up the cluster) and a few that
// Helm's lint complains about.
func testCharts(t *testing.T) map[string][]byte {
	charts := map[string][]byte{}
	dirs, _ := filepath.Glob("../../internal/chartdiff/testdata/*/*")
	for _, d := range dirs {
		charts[filepath.Base(filepath.Dir(d))] = testkit.ArchiveDir(t, d)
	}
	if len(charts) < 5 {
		t.Fatalf("found %d test charts", len(charts))
	}
	charts["no-templates"] = testkit.Archive(t, "notpl", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: notpl\nversion: 1.0.0\n", "values.yaml": "a: 1\n"})
	charts["bad-yaml"] = testkit.MakeChart(t, testkit.Chart{Name: "bad", Version: "1.0.0", Files: map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: [unclosed\n"}})
	charts["schema-fails"] = testkit.MakeChart(t, testkit.Chart{Name: "schema", Version: "1.0.0", Files: map[string]string{
		"values.yaml":        "replicas: many\n",
		"values.schema.json": `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  r: {{ .Values.replicas | quote }}\n"}})
	return charts
}

// TestServeAnswersAsOneShot: the warm worker answers byte for byte what
// the one-shot modes answer, lint and render, for every test chart, and
// stays the same process across them.
func TestServeAnswersAsOneShot(t *testing.T) {
	bin := mustBuild(t)
	pool := sandbox.New(sandbox.Config{Args: []string{bin, "serve"}, Workers: 1, Timeout: time.Minute, Memory: admission.DefaultLintMemory})
	defer pool.Close()
	var pid int
	for name, archive := range testCharts(t) {
		for _, mode := range []string{"lint", "render"} {
			var args []string
			if mode == "render" {
				args = []string{"render"}
			}
			want := oneShot(t, bin, archive, args...)
			got, err := pool.Do(context.Background(), sandbox.Request{Mode: mode}, archive)
			if err != nil {
				t.Fatalf("%s %s: %v", name, mode, err)
			}
			if bytes.Contains(got, []byte("chartctl-lint-")) {
				t.Errorf("%s %s: the answer names the scratch directory: %s", name, mode, got)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %s: the worker answered\n%s\nthe one-shot child\n%s", name, mode, got, want)
			}
			if pids := pool.PIDs(); len(pids) != 1 || (pid != 0 && pids[0] != pid) {
				t.Fatalf("workers %v, the first was %d", pids, pid)
			}
			pid = pool.PIDs()[0]
		}
	}
}

// TestLintSkipsSchemaOnRequest: with values_schema on, Helm's own schema
// pass is left out (the server checked the schema once already).
func TestLintSkipsSchemaOnRequest(t *testing.T) {
	bin := mustBuild(t)
	pool := sandbox.New(sandbox.Config{Args: []string{bin, "serve"}, Workers: 1, Memory: admission.DefaultLintMemory})
	defer pool.Close()
	lint := admission.Pooled(pool)
	archive := testCharts(t)["schema-fails"]
	mentions := func(msgs []admission.LintMessage) bool {
		for _, m := range msgs {
			if m.Severity == "error" && strings.Contains(m.Message, "replicas") {
				return true
			}
		}
		return false
	}
	msgs, err := lint(context.Background(), archive, admission.LintOptions{})
	if err != nil || !mentions(msgs) {
		t.Fatalf("Helm's lint with the schema: %+v %v", msgs, err)
	}
	msgs, err = lint(context.Background(), archive, admission.LintOptions{SkipSchema: true})
	if err != nil || mentions(msgs) {
		t.Fatalf("Helm's lint without the schema: %+v %v", msgs, err)
	}
}

// TestPooledLintBounds: a chart whose template loops past the deadline
// kills its worker and is refused with the bound named; the next chart
// is linted by a fresh worker; a worker killed from outside is replaced.
func TestPooledLintBounds(t *testing.T) {
	bin := mustBuild(t)
	pool := sandbox.New(sandbox.Config{Args: []string{bin, "serve"}, Workers: 1, Timeout: 3 * time.Second, Memory: admission.DefaultLintMemory})
	defer pool.Close()
	lint := admission.Pooled(pool)
	good := testCharts(t)["no-templates"]
	if _, err := lint(context.Background(), good, admission.LintOptions{}); err != nil {
		t.Fatal(err)
	}
	first := pool.PIDs()
	slow := testkit.MakeChart(t, testkit.Chart{Name: "slow", Version: "1.0.0", Files: map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\ndata:\n{{- range $i := until 1000000 }}{{- range $j := until 1000000 }}{{- end }}{{- end }}\n"}})
	_, err := lint(context.Background(), slow, admission.LintOptions{})
	if err == nil || err.Error() != "linting took longer than 3s" {
		t.Fatalf("a looping template: %v", err)
	}
	if !errors.Is(syscall.Kill(first[0], 0), syscall.ESRCH) {
		t.Fatalf("the worker linting the looping chart (%d) is still there", first[0])
	}
	// The killed worker's unpacked chart is gone before the refusal is
	// answered, with no fresh worker started: the pool removed it once
	// it had reaped the worker (a server stopping starts none).
	killed := filepath.Join(sandbox.ScratchDir(), fmt.Sprintf("chartctl-lint-w%d", first[0]))
	if _, err := os.Stat(killed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed worker's scratch directory %s: %v", killed, err)
	}
	msgs, err := lint(context.Background(), good, admission.LintOptions{})
	if err != nil || len(msgs) == 0 {
		t.Fatalf("after the timeout: %+v %v", msgs, err)
	}
	second := pool.PIDs()
	if err := syscall.Kill(second[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if msgs, err := lint(context.Background(), good, admission.LintOptions{}); err != nil || len(msgs) == 0 {
		t.Fatalf("after a kill from outside: %+v %v", msgs, err)
	}
	if now := pool.PIDs(); len(now) != 1 || now[0] == second[0] {
		t.Fatalf("workers %v after killing %d", now, second[0])
	}
	// Rendering goes through the same workers' render mode.
	render := chartdiff.Subprocess(pool)
	r, err := render(context.Background(), slow)
	if err != nil || r.Unrenderable != "rendering took longer than 3s" {
		t.Fatalf("rendering the looping chart: %+v %v", r, err)
	}
	var ans admission.LintAnswer
	b, err := pool.Do(context.Background(), sandbox.Request{Mode: "lint"}, good)
	if err != nil || json.Unmarshal(b, &ans) != nil || len(ans.Messages) == 0 {
		t.Fatalf("after the rendering timeout: %s %v", b, err)
	}
	// A worker that ends cleanly leaves no scratch directory either.
	last := pool.PIDs()[0]
	pool.Close()
	own := filepath.Join(sandbox.ScratchDir(), fmt.Sprintf("chartctl-lint-w%d", last))
	if _, err := os.Stat(own); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a closed worker's scratch directory %s: %v", own, err)
	}
}
