package helmlint

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/rules"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chart"
)

// benchChart is the ~4 KiB chart of server's BenchmarkUploadPolicy: a
// README, a schema its values meet and a deployment that lints clean.
func benchChart(tb testing.TB) []byte {
	tb.Helper()
	var readme strings.Builder
	for i := 0; readme.Len() < 9000; i++ {
		fmt.Fprintf(&readme, "Line %d of the README: parameters, examples and notes %x.\n", i, i*7919)
	}
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: bench\nversion: 1.0.0\ndescription: A benchmark chart\nappVersion: \"1.0\"\nicon: https://example.com/i.png\n",
		"values.yaml":               "replicaCount: 1\nimage:\n  repository: nginx\n  tag: \"1.25\"\n",
		"values.schema.json":        `{"type":"object","properties":{"replicaCount":{"type":"integer","minimum":0},"image":{"type":"object","properties":{"repository":{"type":"string"},"tag":{"type":"string"}}}}}`,
		"templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n  selector:\n    matchLabels:\n      app: bench\n  template:\n    metadata:\n      labels:\n        app: bench\n    spec:\n      containers:\n        - name: app\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n",
		"README.md":                 readme.String(),
	}
	var arch bytes.Buffer
	gz := gzip.NewWriter(&arch)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "bench/" + name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	gz.Close()
	return arch.Bytes()
}

func BenchmarkLintArchive(b *testing.B) {
	arch := benchChart(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := LintArchive(arch, chart.DefaultLimits(), admission.LintOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHelmRules is the floor under any lint through Helm's packages:
// Helm's lint.RunAll alone on a chart already unpacked into memory-backed
// storage (no unpacking, no process, no pipe), and its Templates rule
// alone (rendering, the YAML parse and the deprecation check every
// manifest goes through). docs/performance.md compares it with an upload.
func BenchmarkHelmRules(b *testing.B) {
	dir := b.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "helmrules-"); err == nil {
		dir = shm
		b.Cleanup(func() { os.RemoveAll(shm) })
	}
	if _, err := chart.Walk(bytes.NewReader(benchChart(b)), chart.DefaultLimits(), func(p string, _ int64, content io.Reader) error {
		dst := filepath.Join(dir, "bench", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		data, err := io.ReadAll(content)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	}); err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "bench")
	b.Run("RunAll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res := lint.RunAll(root, nil, "default", lint.WithSkipSchemaValidation(true))
			if len(res.Messages) > 2 {
				b.Fatalf("lint found %v", res.Messages)
			}
		}
	})
	b.Run("Templates", func(b *testing.B) {
		values, err := common.ReadValuesFile(filepath.Join(root, "values.yaml"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			l := support.Linter{ChartDir: root}
			rules.Templates(&l, "default", values, rules.TemplateLinterSkipSchemaValidation(true))
			if len(l.Messages) > 1 {
				b.Fatalf("templates rule found %v", l.Messages)
			}
		}
	})
}
