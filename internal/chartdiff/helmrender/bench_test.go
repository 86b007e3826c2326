package helmrender_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/chartdiff/helmrender"
	"github.com/chartctl/chartctl/internal/sandbox"
)

// bigArchive builds the chart of chartdiff's BenchmarkDiff1MiB: about
// 1 MiB of text, a values.yaml of 2,000 keys and 60 templates of ~16 KiB;
// with changed set a tenth of the values and of every template's lines
// differ and one template is replaced.
func bigArchive(tb testing.TB, changed bool) []byte {
	tb.Helper()
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: big\nversion: 1.0.0\n"}
	var v strings.Builder
	for i := range 2000 {
		val := i
		if changed && i%10 == 0 {
			val = i + 1
		}
		if i%20 == 0 {
			fmt.Fprintf(&v, "section%d:\n", i/20)
		}
		fmt.Fprintf(&v, "  key%d: %d\n", i, val)
	}
	files["values.yaml"] = v.String()
	for t := range 60 {
		var b strings.Builder
		for l := range 400 {
			s := fmt.Sprintf("      - name: container-%d-%d\n        image: {{ .Values.section%d.key%d }}\n", t, l, l%100, l)
			if changed && l%10 == 0 {
				s = strings.Replace(s, "name:", "name: new-", 1)
			}
			b.WriteString(s)
		}
		name := fmt.Sprintf("templates/t%02d.yaml", t)
		if changed && t == 59 {
			name = "templates/replacement.yaml"
		}
		files[name] = b.String()
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "big/" + name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkDiff1MiBRendered is the server's work for a first, uncached
// diff of two 1 MiB charts with their rendered manifests
// (docs/performance.md "Diff"): the files' diff, both versions rendered
// at once, and the rendered manifests' diff. Sub-benchmarks split the
// cost: "files" (as BenchmarkDiff1MiB), "render" (one chart rendered in
// this process: Helm's engine alone), "child" (the whole diff with the
// real chartctl-lint child the server runs), "kept" (the whole diff when
// the images job has kept both versions' renderings: decoded instead of
// rendered).
func BenchmarkDiff1MiBRendered(b *testing.B) {
	a1, a2 := bigArchive(b, false), bigArchive(b, true)
	lim := chart.DefaultLimits()
	bin := filepath.Join(b.TempDir(), "chartctl-lint")
	build := exec.Command("go", "build", "-o", bin, "github.com/chartctl/chartctl/cmd/chartctl-lint")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("build chartctl-lint: %v", err)
	}
	diff := func(b *testing.B, render chartdiff.Renderer) *chartdiff.Result {
		f1, err := chartdiff.ReadFiles(bytes.NewReader(a1), lim)
		if err != nil {
			b.Fatal(err)
		}
		f2, err := chartdiff.ReadFiles(bytes.NewReader(a2), lim)
		if err != nil {
			b.Fatal(err)
		}
		res := chartdiff.Compare(f1, f2)
		if render == nil {
			return res
		}
		var r [2]*chartdiff.Rendering
		var wg sync.WaitGroup
		for i, a := range [][]byte{a1, a2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if r[i], err = render(context.Background(), a); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		if r[0] == nil || r[1] == nil || r[0].Unrenderable != "" || r[1].Unrenderable != "" {
			b.Fatalf("rendering: %+v %+v", r[0], r[1])
		}
		return res.WithRendered(chartdiff.CompareRendered(r[0].Manifests, r[1].Manifests), "")
	}
	b.Run("files", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := diff(b, nil); len(res.Files) != 62 {
				b.Fatalf("%d files", len(res.Files))
			}
		}
	})
	b.Run("render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r := helmrender.Render(context.Background(), a2, lim); r.Unrenderable != "" || len(r.Manifests) != 60 {
				b.Fatalf("%d manifests (%s)", len(r.Manifests), r.Unrenderable)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		// What the images job keeps for each archive, encoded once.
		var kept [2][]byte
		for i, a := range [][]byte{a1, a2} {
			r := helmrender.Render(context.Background(), a, lim)
			var err error
			if kept[i], err = chartdiff.EncodeRendering(r); err != nil {
				b.Fatal(err)
			}
		}
		fromKept := func(_ context.Context, a []byte) (*chartdiff.Rendering, error) {
			i := 0
			if bytes.Equal(a, a2) {
				i = 1
			}
			return chartdiff.DecodeRendering(kept[i])
		}
		b.ReportAllocs()
		for b.Loop() {
			if res := diff(b, fromKept); len(res.Files) != 62+61 {
				b.Fatalf("%d entries", len(res.Files))
			}
		}
	})
	b.Run("child", func(b *testing.B) {
		// Warm workers, as serve keeps them (two: a diff renders both
		// versions at once).
		pool := sandbox.New(sandbox.Config{Args: []string{bin, "serve"}, Workers: 2, Timeout: chartdiff.DefaultRenderTimeout,
			Memory: chartdiff.DefaultRenderMemory, MaxAnswer: chartdiff.MaxRenderedBytes + 1<<20})
		defer pool.Close()
		child := chartdiff.Subprocess(pool)
		b.ReportAllocs()
		for b.Loop() {
			// 62 files and 60 rendered manifests (59 changed, one
			// removed, one added).
			if res := diff(b, child); len(res.Files) != 62+61 {
				b.Fatalf("%d entries", len(res.Files))
			}
		}
	})
}
