package chartdiff

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chart"
)

// archive1MiB builds a chart archive of about 1 MiB of text: Chart.yaml,
// a values.yaml of 2,000 keys and 60 templates of ~16 KiB. With changed
// set, a tenth of the values and of every template's lines differ, and
// one template is replaced by another: a large upgrade.
func archive1MiB(tb testing.TB, changed bool) []byte {
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

// BenchmarkDiff1MiB is the server's work for a first, uncached diff of
// two 1 MiB charts: read and validate both archives, compare every file
// and values.yaml (docs/performance.md "Diff").
func BenchmarkDiff1MiB(b *testing.B) {
	a1, a2 := archive1MiB(b, false), archive1MiB(b, true)
	lim := chart.DefaultLimits()
	b.ReportAllocs()
	for b.Loop() {
		f1, err := ReadFiles(bytes.NewReader(a1), lim)
		if err != nil {
			b.Fatal(err)
		}
		f2, err := ReadFiles(bytes.NewReader(a2), lim)
		if err != nil {
			b.Fatal(err)
		}
		res := Compare(f1, f2)
		if len(res.Files) != 62 || res.ValuesError != "" || len(res.Values.Changed) != 200 {
			b.Fatalf("files %d, changed values %d (%s)", len(res.Files), len(res.Values.Changed), res.ValuesError)
		}
	}
}
