package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// BenchmarkUploadPolicy uploads a ~4 KiB chart into a repository without
// an admission policy and into one with lint (error) and values_schema,
// linting in process (serve lints in a child process; docs/performance.md
// gives that cost apart).
func BenchmarkUploadPolicy(b *testing.B) {
	for _, c := range []struct {
		name   string
		policy *chartctl.Policy
	}{
		{"none", nil},
		{"lint+schema", &chartctl.Policy{RequireSignature: chartctl.SignatureNone, Lint: chartctl.LintError, ValuesSchema: true, AllowPrerelease: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, key := benchServer(b)
			s.app.Lint = helmlint.InProcess(chart.DefaultLimits())
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
			bodies := make([][]byte, b.N)
			ctypes := make([]string, b.N)
			for i := range bodies {
				bodies[i], ctypes[i] = policyBenchChart(b, fmt.Sprintf("1.0.%d", i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodPost, "/v1/repositories/r/charts", bytes.NewReader(bodies[i]))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", ctypes[i])
				serve(b, s, req, http.StatusOK)
			}
		})
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
