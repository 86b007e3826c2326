package importer

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// decoded is what decodeIndex reports, as comparable text: one
// "chart|name|version|created|digest|urls" line per version, sorted.
func decoded(tb testing.TB, doc string) (lines []string, apiVersion string, hasEntries bool, err error) {
	tb.Helper()
	apiVersion, hasEntries, err = decodeIndex(strings.NewReader(doc), func(c string, e *indexEntry) {
		lines = append(lines, entryLine(c, e))
	})
	slices.Sort(lines)
	return lines, apiVersion, hasEntries, err
}

func entryLine(c string, e *indexEntry) string {
	return strings.Join([]string{c, e.Name, e.Version, e.Created, e.Digest, strings.Join(e.URLs, ",")}, "|")
}

// whole decodes doc the old way, whole, with the same YAML library.
func whole(doc string) ([]string, error) {
	var idx struct {
		Entries map[string][]indexEntry `yaml:"entries"`
	}
	if err := yaml.Unmarshal([]byte(doc), &idx); err != nil {
		return nil, err
	}
	var lines []string
	for c, es := range idx.Entries {
		for i := range es {
			lines = append(lines, entryLine(c, &es[i]))
		}
	}
	slices.Sort(lines)
	return lines, nil
}

// TestDecodeIndexHelmWritten reads indexes that Helm itself writes, in
// YAML and in JSON, with every field Helm writes, and finds exactly what
// a whole decode finds.
func TestDecodeIndexHelmWritten(t *testing.T) {
	idx := repo.NewIndexFile()
	for c := range 3 {
		for v := range 4 {
			md := &chart.Metadata{
				APIVersion: "v2", Name: fmt.Sprintf("chart-%d", c), Version: fmt.Sprintf("1.%d.0", v), AppVersion: "1.10",
				Description: "Multi-line\n  - name: not-an-entry\nversion: 9.9.9\n\n# not a comment",
				Keywords:    []string{"a", "b"}, Home: "https://example.com",
				Maintainers:  []*chart.Maintainer{{Name: "Jane", Email: "jane@example.com"}},
				Dependencies: []*chart.Dependency{{Name: "common", Version: "2.x.x", Repository: "oci://r.example.com/charts"}},
				Annotations:  map[string]string{"artifacthub.io/changes": "- kind: added\n  description: x\n"},
			}
			digest := fmt.Sprintf("%064d", c*10+v) // digits only: a YAML number unless quoted
			if err := idx.MustAdd(md, fmt.Sprintf("chart-%d-1.%d.0.tgz", c, v), "https://charts.example.com/sub", digest); err != nil {
				t.Fatal(err)
			}
		}
	}
	idx.SortEntries()
	dir := t.TempDir()
	for _, write := range []func(string) error{
		func(p string) error { return idx.WriteFile(p, 0o644) },
		func(p string) error { return idx.WriteJSONFile(p, 0o644) },
	} {
		p := filepath.Join(dir, "index")
		if err := write(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, apiVersion, hasEntries, err := decoded(t, string(b))
		if err != nil {
			t.Fatalf("decodeIndex: %v\n%s", err, b)
		}
		want, err := whole(string(b))
		if err != nil {
			t.Fatal(err)
		}
		if apiVersion != "v1" || !hasEntries || len(got) != 12 || !slices.Equal(got, want) {
			t.Errorf("apiVersion %q, entries %v, got\n%s\nwant\n%s", apiVersion, hasEntries, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(got[0], "|"+fmt.Sprintf("%064d", 0)+"|") {
			t.Errorf("the digest is not kept as written: %s", got[0])
		}
	}
}

// TestDecodeIndexForms reads the YAML forms other writers use.
func TestDecodeIndexForms(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
		wantErr   string
	}{
		{name: "empty", doc: "apiVersion: v1\nentries: {}\ngenerated: x\n"},
		{name: "bom crlf comments and a deeper list", doc: "\ufeff# index\r\napiVersion: v1\r\nentries:\r\n    # charts\r\n    a:\r\n        - name: a\r\n          version: \"1.10\"\r\n          urls: [a.tgz]\r\n\r\n        - version: 2.0.0\r\n    'b':\r\n    - {name: b, version: 1.0.0}\r\ngenerated: now\r\n",
			want: []string{"a|a|1.10|||a.tgz", "a||2.0.0|||", "b|b|1.0.0|||"}},
		{name: "entries before apiVersion, a chart without versions", doc: "entries:\n  a:\n  b:\n  - name: b\n    version: 1.0.0\n    description: |\n      - name: nope\n      version: 6.6.6\napiVersion: v1\n",
			want: []string{"b|b|1.0.0|||"}},
		{name: "flow chart", doc: "apiVersion: v1\nentries:\n  a: [{name: a, version: 1.0.0},\n    {name: a, version: 1.1.0}]\n", want: []string{"a|a|1.0.0|||", "a|a|1.1.0|||"}},
		{name: "flow entries", doc: "apiVersion: v1\nentries: {a: [{name: a, version: 1.0.0}]}\n", want: []string{"a|a|1.0.0|||"}},
		{name: "second document ignored", doc: "apiVersion: v1\nentries:\n  a:\n  - version: 1.0.0\n---\napiVersion: v1\nentries:\n  z:\n  - version: 9.0.0\n", want: []string{"a||1.0.0|||"}},
		{name: "json", doc: " {\"apiVersion\":\"v1\",\"generated\":{\"x\":[1,2]},\"entries\":{\"a\":[{\"name\":\"a\",\"version\":\"1.0.0\",\"extra\":{\"k\":[1]}}],\"n\":null}}", want: []string{"a|a|1.0.0|||"}},
		{name: "not an index", doc: "hello: world\n"},
		{name: "a list", doc: "- a\n- b\n"},
		{name: "bad json", doc: "{\"apiVersion\": \"v1\", \"entries\": {\"a\": [1]}}", wantErr: "a JSON number"},
		{name: "cut json", doc: "{\"apiVersion\": \"v1\", \"entries\": {\"a\": [", wantErr: "ends early"},
		{name: "entries not a mapping", doc: "apiVersion: v1\nentries:\n  - a\n", wantErr: "expected a chart's name"},
		{name: "bad yaml", doc: "apiVersion: v1\nentries:\n  a:\n  - name: [\n", wantErr: "invalid YAML near line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _, err := decoded(t, tc.doc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestDecodeIndexEntryBound: one entry past maxEntrySize is refused, not
// decoded whole.
func TestDecodeIndexEntryBound(t *testing.T) {
	doc := "apiVersion: v1\nentries:\n  a:\n  - name: a\n    keywords:\n" + strings.Repeat("    - k\n", maxEntrySize/8+1)
	_, _, _, err := decoded(t, doc)
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("err = %v", err)
	}
}

// TestDecodeIndexIndentedTop: white space before the first line is kept
// for YAML, so an index whose top level is indented (Helm writes none) is
// refused rather than read by another structure than YAML gives it; blank
// lines before the document and white space before a JSON index are fine.
func TestDecodeIndexIndentedTop(t *testing.T) {
	for _, doc := range []string{
		" apiVersion: v1\nentries:\n  a:\n  - name: a\n    version: 1.0.0\n",
		"# an index\n  x: 1\nentries:\n  a:\n  - name: a\n    version: 1.0.0\n",
	} {
		if _, _, _, err := decoded(t, doc); !errors.Is(err, errNotIndex) || !strings.Contains(err.Error(), "indented") {
			t.Errorf("%q: err = %v, want the top level refused as indented", doc, err)
		}
	}
	for _, doc := range []string{
		"\n\n\xef\xbb\xbfapiVersion: v1\nentries:\n  a:\n  - name: a\n    version: 1.0.0\n",
		"\xef\xbb\xbf\n\napiVersion: v1\nentries:\n  a:\n  - name: a\n    version: 1.0.0\n",
		" \n\t\n {\"apiVersion\":\"v1\",\"entries\":{\"a\":[{\"name\":\"a\",\"version\":\"1.0.0\"}]}}",
	} {
		got, _, _, err := decoded(t, doc)
		if err != nil || len(got) != 1 || got[0] != "a|a|1.0.0|||" {
			t.Errorf("%q: %q, %v", doc, got, err)
		}
	}
}

// FuzzDecodeIndex: whenever an index decodes both piece by piece and
// whole, the two agree.
func FuzzDecodeIndex(f *testing.F) {
	f.Add("apiVersion: v1\nentries:\n  a:\n  - name: a\n    version: 1.0.0\n    urls:\n    - a.tgz\n")
	f.Add("entries:\n    a:\n        - version: 1\n          digest: 01\n    b:\n    - name: b\n      description: >\n        x\n\n        - y\n")
	f.Add("apiVersion: v1\nentries:\n  a:\n  - &x {name: a, version: 1}\n  - *x\n")
	f.Add(`{"entries":{"a":[{"version":"1"}]}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		got, _, _, err := decoded(t, doc)
		if err != nil {
			return
		}
		want, werr := whole(doc)
		if werr != nil {
			return
		}
		if !slices.Equal(got, want) {
			t.Errorf("piece by piece\n%s\nwhole\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestVersionsCutConnection: an index whose connection ends early is a
// failed read, not "not a Helm repository index".
func TestVersionsCutConnection(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = io.WriteString(w, "apiVersion: v1\nentries:\n  a:\n  - name: a\n")
	}))
	t.Cleanup(up.Close)
	src, err := NewHelmSource(up.URL, Auth{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Versions(t.Context())
	if err == nil || !strings.HasPrefix(err.Error(), "read the index of "+up.URL+": ") || strings.Contains(err.Error(), "not a Helm") {
		t.Fatalf("err = %v", err)
	}
}
