package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/sandbox"
)

// BenchmarkUploadPolicy uploads a ~4 KiB chart into a repository without
// an admission policy and into ones with lint (error) and values_schema,
// linted three ways: in this process (inprocess), by a chartctl-lint
// child per upload as serve did before the warm pool (oneshot), and by
// serve's warm pool of chartctl-lint workers (pool). The oneshot and pool
// cases need chartctl-lint: CHARTCTL_BENCH_LINT names the binary (else
// it is built); CHARTCTL_BENCH_LINT_ONESHOT can name an older build for
// the oneshot case. docs/performance.md has the numbers.
func BenchmarkUploadPolicy(b *testing.B) {
	policy := &chartctl.Policy{RequireSignature: chartctl.SignatureNone, Lint: chartctl.LintError, ValuesSchema: true, AllowPrerelease: true}
	var bin string
	linter := func(b *testing.B) string {
		if bin == "" {
			bin = os.Getenv("CHARTCTL_BENCH_LINT")
		}
		if bin == "" {
			bin = filepath.Join(os.TempDir(), fmt.Sprintf("chartctl-lint-bench-%d", os.Getpid()))
			build := exec.Command("go", "build", "-o", bin, "github.com/chartctl/chartctl/cmd/chartctl-lint")
			build.Stderr = os.Stderr
			if err := build.Run(); err != nil {
				b.Fatalf("build chartctl-lint: %v", err)
			}
		}
		return bin
	}
	for _, c := range []struct {
		name   string
		policy *chartctl.Policy
		lint   func(b *testing.B) admission.Linter
	}{
		{"none", nil, nil},
		{"lint+schema/inprocess", policy, func(*testing.B) admission.Linter { return helmlint.InProcess(chart.DefaultLimits()) }},
		{"lint+schema/oneshot", policy, func(b *testing.B) admission.Linter {
			one := os.Getenv("CHARTCTL_BENCH_LINT_ONESHOT")
			if one == "" {
				one = linter(b)
			}
			return oneShotLinter(one)
		}},
		{"lint+schema/pool", policy, func(b *testing.B) admission.Linter {
			pool := sandbox.New(sandbox.Config{Args: []string{linter(b), "serve"}, Workers: 2, Timeout: admission.DefaultLintTimeout,
				Memory: admission.DefaultLintMemory, Env: []string{"GOMAXPROCS=1"}})
			b.Cleanup(func() { pool.Close() })
			return admission.Pooled(pool)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, key := benchServer(b)
			if c.lint != nil {
				s.app.Lint = c.lint(b)
			}
			ctx := context.Background()
			u, _ := s.Store.UserByEmail(ctx, "bench@example.com")
			repo := &chartctl.Repository{Name: "r", OwnerID: u.ID}
			if err := s.Store.CreateRepository(ctx, repo); err != nil {
				b.Fatal(err)
			}
			if c.policy != nil {
				if err := s.Store.SetPolicy(ctx, chartctl.PolicyRepository, repo.ID, c.policy); err != nil {
					b.Fatal(err)
				}
			}
			bodies := make([][]byte, b.N+1)
			ctypes := make([]string, b.N+1)
			for i := range bodies {
				bodies[i], ctypes[i] = policyBenchChart(b, fmt.Sprintf("1.0.%d", i))
			}
			upload := func(i int) {
				req := httptest.NewRequest(http.MethodPost, "/v1/repositories/r/charts", bytes.NewReader(bodies[i]))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", ctypes[i])
				serve(b, s, req, http.StatusOK)
			}
			// One upload before the clock starts: a pool's worker starts
			// on first use and then stays warm, as in a running server.
			upload(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				upload(i)
			}
		})
	}
}

// oneShotLinter runs bin once per chart, the archive on its standard
// input: what serve did before the warm pool.
func oneShotLinter(bin string) admission.Linter {
	return func(ctx context.Context, archive []byte, _ admission.LintOptions) ([]admission.LintMessage, error) {
		cmd := exec.CommandContext(ctx, bin)
		cmd.Stdin = bytes.NewReader(archive)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", admission.LintChildEnv, int64(admission.DefaultLintMemory)), "GOMAXPROCS=1")
		out, err := cmd.Output()
		if err != nil {
			return nil, err
		}
		var ans admission.LintAnswer
		if err := json.Unmarshal(out, &ans); err != nil {
			return nil, err
		}
		return ans.Messages, nil
	}
}

// policyBenchChart is a chart of about 4 KiB (archive) with a schema its
// values meet and templates that lint clean.
func policyBenchChart(b *testing.B, version string) ([]byte, string) {
	b.Helper()
	var readme strings.Builder
	for i := 0; readme.Len() < 9000; i++ {
		fmt.Fprintf(&readme, "Line %d of the README: parameters, examples and notes %x.\n", i, i*7919)
	}
	arch := benchArchive(b, "bench", map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: bench\nversion: " + version + "\ndescription: A benchmark chart\nappVersion: \"1.0\"\nicon: https://example.com/i.png\n",
		"values.yaml":               "replicaCount: 1\nimage:\n  repository: nginx\n  tag: \"1.25\"\n",
		"values.schema.json":        `{"type":"object","properties":{"replicaCount":{"type":"integer","minimum":0},"image":{"type":"object","properties":{"repository":{"type":"string"},"tag":{"type":"string"}}}}}`,
		"templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n  selector:\n    matchLabels:\n      app: bench\n  template:\n    metadata:\n      labels:\n        app: bench\n    spec:\n      containers:\n        - name: app\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n",
		"README.md":                 readme.String(),
	})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("chart", "bench.tgz")
	fw.Write(arch)
	mw.Close()
	return body.Bytes(), mw.FormDataContentType()
}

func benchArchive(b *testing.B, top string, files map[string]string) []byte {
	var arch bytes.Buffer
	gz := gzip.NewWriter(&arch)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			b.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	gz.Close()
	return arch.Bytes()
}
