package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

func mustGenerate(tb testing.TB, n, set int) []Chart {
	tb.Helper()
	cs, err := Generate(n, set)
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := mustGenerate(t, 50, 0), mustGenerate(t, 50, 0)
	for i := range a {
		if !bytes.Equal(a[i].Archive, b[i].Archive) {
			t.Fatalf("archive %d (%s) differs between runs", i, a[i].Filename())
		}
	}
	// A bigger corpus starts with different interleaving, but Make is the
	// same function of (chart, version, set).
	c, err := Make(3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := Make(3, 2, 1)
	if !bytes.Equal(c.Archive, d.Archive) {
		t.Fatal("Make not deterministic")
	}
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
)

func TestNamesAndVersions(t *testing.T) {
	for _, set := range []int{0, 1} {
		cs := mustGenerate(t, 1000, set)
		if len(cs) != 1000 {
			t.Fatalf("got %d charts", len(cs))
		}
		seen := map[string]bool{}
		names := map[string]int{}
		for _, c := range cs {
			if !nameRE.MatchString(c.Name) || len(c.Name) > 63 {
				t.Fatalf("bad chart name %q", c.Name)
			}
			if !versionRE.MatchString(c.Version) || !strings.HasPrefix(c.Version, string(rune('1'+set))+".") {
				t.Fatalf("bad version %q for set %d", c.Version, set)
			}
			if seen[c.Filename()] {
				t.Fatalf("duplicate %s", c.Filename())
			}
			seen[c.Filename()] = true
			names[c.Name]++
		}
		if len(names) != 100 {
			t.Fatalf("%d chart names, want 100", len(names))
		}
		for n, v := range names {
			if v != VersionsPerChart {
				t.Fatalf("%s has %d versions", n, v)
			}
		}
		// Interleaved: consecutive uploads go to different charts.
		if cs[0].Name == cs[1].Name {
			t.Fatal("not interleaved")
		}
	}
	// Past the word combinations names stay unique.
	if ChartName(0) == ChartName(len(prefixes)*len(suffixes)) {
		t.Fatal("names repeat")
	}
	if got := ChartName(len(prefixes) * len(suffixes)); got != "nginx-operator-1" {
		t.Fatalf("ChartName = %q", got)
	}
}

func TestSetsDoNotOverlap(t *testing.T) {
	a, b := mustGenerate(t, 200, 0), mustGenerate(t, 200, 1)
	seen := map[string]bool{}
	for _, c := range a {
		seen[c.Filename()] = true
	}
	for _, c := range b {
		if seen[c.Filename()] {
			t.Fatalf("%s in both sets", c.Filename())
		}
	}
}

func TestArchivesAreValid(t *testing.T) {
	total := 0
	cs := mustGenerate(t, 200, 0)
	for _, c := range cs {
		total += len(c.Archive)
		files := readArchive(t, c.Archive)
		for _, want := range []string{"Chart.yaml", "values.yaml", "templates/deployment.yaml", "README.md"} {
			if _, ok := files[c.Name+"/"+want]; !ok {
				t.Fatalf("%s lacks %s/%s (has %v)", c.Filename(), c.Name, want, keys(files))
			}
		}
		if len(files) != 4 {
			t.Fatalf("%s has %d files", c.Filename(), len(files))
		}
		cy := files[c.Name+"/Chart.yaml"]
		for _, want := range []string{
			"apiVersion: v2\n", "name: " + c.Name + "\n", "version: " + c.Version + "\n",
			"appVersion: \"" + c.AppVersion + "\"\n", "description: \"" + c.Description + "\"\n",
			"keywords:\n  - ", "maintainers:\n  - name: ", "    email: ", "home: https://", "sources:\n  - https://",
		} {
			if !strings.Contains(cy, want) {
				t.Fatalf("%s Chart.yaml lacks %q:\n%s", c.Filename(), want, cy)
			}
		}
		for _, k := range c.Keywords {
			if !strings.Contains(cy, "  - "+k+"\n") {
				t.Fatalf("keyword %q not in Chart.yaml", k)
			}
		}
	}
	if avg := total / len(cs); avg < 2500 || avg > 3700 {
		t.Fatalf("average archive %d bytes, want about 3 KiB", avg)
	}
}

func readArchive(tb testing.TB, archive []byte) map[string]string {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		tb.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("bad tar: %v", err)
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || !h.ModTime.Equal(modTime) {
			tb.Fatalf("unexpected header %+v", h)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		files[h.Name] = string(b)
	}
	if err := zr.Close(); err != nil {
		tb.Fatalf("gzip trailer: %v", err)
	}
	return files
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestGenerateRejectsNegative(t *testing.T) {
	if _, err := Generate(-1, 0); err == nil {
		t.Fatal("negative n accepted")
	}
	if cs := mustGenerate(t, 0, 0); len(cs) != 0 {
		t.Fatal("n=0 not empty")
	}
	if cs := mustGenerate(t, 7, 0); len(cs) != 7 || cs[0].Name != cs[6].Name {
		// 7 archives: one chart name with versions 0..6.
		t.Fatalf("small corpus: %d, %s %s", len(cs), cs[0].Name, cs[6].Name)
	}
}

// Helm itself loads every archive and reads back the metadata.
func TestHelmLoadsArchives(t *testing.T) {
	for _, c := range mustGenerate(t, 40, 1) {
		ch, err := loader.LoadArchive(bytes.NewReader(c.Archive))
		if err != nil {
			t.Fatalf("helm rejects %s: %v", c.Filename(), err)
		}
		if err := ch.Validate(); err != nil {
			t.Fatalf("helm: %s invalid: %v", c.Filename(), err)
		}
		m := ch.Metadata
		if m.Name != c.Name || m.Version != c.Version || m.AppVersion != c.AppVersion || m.Description != c.Description ||
			len(m.Maintainers) == 0 || len(m.Sources) != 1 || len(m.Keywords) != len(c.Keywords) {
			t.Fatalf("helm reads %+v for %s", m, c.Filename())
		}
		if ch.Values["replicaCount"] == nil || len(ch.Templates) != 1 {
			t.Fatalf("%s: values %v templates %d", c.Filename(), ch.Values, len(ch.Templates))
		}
	}
}

func TestSpread(t *testing.T) {
	cs, err := Spread(5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 5000 {
		t.Fatalf("got %d versions, want 5000", len(cs))
	}
	again, err := Spread(5000)
	if err != nil {
		t.Fatal(err)
	}
	perChart := map[string]int{}
	seen := map[string]bool{}
	for k, c := range cs {
		if c.Name != again[k].Name || c.Version != again[k].Version || !bytes.Equal(c.Archive, again[k].Archive) {
			t.Fatalf("push %d differs between two calls: %s-%s / %s-%s", k, c.Name, c.Version, again[k].Name, again[k].Version)
		}
		if seen[c.Filename()] {
			t.Fatalf("%s pushed twice", c.Filename())
		}
		seen[c.Filename()] = true
		// Each chart's versions come in order: 1.0.x, 1.1.x, …
		if want := fmt.Sprintf("1.%d.", perChart[c.Name]); !strings.HasPrefix(c.Version, want) {
			t.Fatalf("push %d: %s %s, want version %s*", k, c.Name, c.Version, want)
		}
		perChart[c.Name]++
	}
	if len(perChart) != 100 {
		t.Fatalf("got %d charts, want 100 (n/50)", len(perChart))
	}
	busiest, quietest := 0, len(cs)
	for _, n := range perChart {
		busiest, quietest = max(busiest, n), min(quietest, n)
	}
	// A skew, not an even split: the busiest chart has many times the
	// quietest's versions.
	if busiest < 10*quietest || quietest < 1 {
		t.Fatalf("busiest chart %d versions, quietest %d: want a skew of at least 10×", busiest, quietest)
	}
	// Interleaved: the busiest chart's pushes are not all at the end.
	if cs[0].Name == cs[len(cs)-1].Name && cs[1].Name == cs[len(cs)-2].Name && cs[2].Name == cs[len(cs)-3].Name {
		t.Fatalf("pushes look sorted by chart, not interleaved")
	}
}
