package helmindex

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	yamlv2 "go.yaml.in/yaml/v2"
	yamlv3 "go.yaml.in/yaml/v3"
)

func mustView(tb testing.TB, c *Cache, q Query) *Index {
	tb.Helper()
	ix, err := c.View(context.Background(), "r", q)
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// viewCVs is a repository whose charts exercise the renderers.
func viewCVs(t *testing.T) []*chartctl.ChartVersion {
	return []*chartctl.ChartVersion{
		mkCV(t, richMetadata(), "web", "1.2.3", t0),
		mkCV(t, nil, "web", "1.10.0", t0.Add(time.Minute)),
		mkCV(t, nil, "web", "1.10.0-rc.1", t0.Add(2*time.Minute)),
		mkCV(t, nil, "web", "v2.0", t0.Add(3*time.Minute)),
		mkCV(t, nil, "api", "0.1.0", t0.Add(5*time.Minute)),
		mkCV(t, nil, "true", "1.0.0", t0.Add(6*time.Minute)),
		mkCV(t, nil, "1.0", "1.0.0", t0.Add(7*time.Minute)),
	}
}

// TestJSONIndexLoadsAsYAMLIndex: Helm's loader (its JSON path) reads the
// JSON index to exactly what it reads from the YAML one.
func TestJSONIndexLoadsAsYAMLIndex(t *testing.T) {
	c, _ := setup(t, viewCVs(t)...)
	y, j := mustView(t, c, Query{}), mustView(t, c, Query{Format: JSON})
	if !json.Valid(j.Body) {
		t.Fatalf("not JSON, so Helm would not take its JSON path:\n%s", j.Body)
	}
	if !reflect.DeepEqual(loadWithHelm(t, y.Body), loadWithHelm(t, j.Body)) {
		t.Errorf("Helm loads different indexes:\n%s\n%s", y.Body, j.Body)
	}
	if y.ETag == j.ETag || !y.Generated.Equal(j.Generated) {
		t.Errorf("ETags %s %s, generated %v %v", y.ETag, j.ETag, y.Generated, j.Generated)
	}
	if j.TypeHeader[0] != "application/json" || y.TypeHeader[0] != "application/x-yaml" {
		t.Errorf("types %v %v", j.TypeHeader, y.TypeHeader)
	}
	if j.LastModifiedHeader[0] != "Sun, 01 Mar 2026 12:07:00 GMT" {
		t.Errorf("Last-Modified %v", j.LastModifiedHeader)
	}
}

// TestJSONIndexReadsAsYAML: YAML parsers that know nothing of JSON (the
// YAML 1.1 one older Helm uses through sigs.k8s.io/yaml, and yaml.v3)
// read the JSON index to the same document as the YAML index.
func TestJSONIndexReadsAsYAML(t *testing.T) {
	c, _ := setup(t, viewCVs(t)...)
	y, j := mustView(t, c, Query{}), mustView(t, c, Query{Format: JSON})
	for _, p := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{{"yaml.v3", yamlv3.Unmarshal}, {"yaml.v2", yamlv2.Unmarshal}} {
		var fromYAML, fromJSON any
		if err := p.unmarshal(y.Body, &fromYAML); err != nil {
			t.Fatal(err)
		}
		if err := p.unmarshal(j.Body, &fromJSON); err != nil {
			t.Fatalf("%s cannot read the JSON index: %v", p.name, err)
		}
		// YAML reads the plain timestamps of the YAML index as times
		// and JSON's quoted ones as strings: compare them as text.
		if a, b := normalize(fromYAML), normalize(fromJSON); !reflect.DeepEqual(a, b) {
			t.Errorf("%s reads different documents:\n%v\n%v", p.name, a, b)
		}
	}
}

// normalize turns times into RFC 3339 strings and every map into a
// map[string]any, so documents from both parsers and formats compare.
func normalize(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case map[string]any:
		m := map[string]any{}
		for k, e := range v {
			m[k] = normalize(e)
		}
		return m
	case map[any]any:
		m := map[string]any{}
		for k, e := range v {
			m[k.(string)] = normalize(e)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

func TestPerChartView(t *testing.T) {
	cvs := viewCVs(t)
	c, l := setup(t, cvs...)
	for _, f := range []Format{YAML, JSON} {
		web := mustView(t, c, Query{Format: f, Chart: "web"})
		hi := loadWithHelm(t, web.Body)
		if len(hi.Entries) != 1 || len(hi.Entries["web"]) != 4 {
			t.Fatalf("per-chart index lists %v", hi.Entries)
		}
		if !web.Generated.Equal(t0.Add(3 * time.Minute)) {
			t.Errorf("generated = %v, want web's newest upload", web.Generated)
		}
	}
	if f := mustView(t, c, Query{Chart: "web"}).Body; !bytes.Equal(f, helmIndex(t, cvs[:4], t0.Add(3*time.Minute))) {
		t.Errorf("the YAML per-chart index is not what Helm writes for the chart:\n%s", f)
	}
	before := map[Format]string{}
	for _, f := range []Format{YAML, JSON} {
		before[f] = mustView(t, c, Query{Format: f, Chart: "web"}).ETag
	}

	// Another chart changes: web's index keeps its ETag (and is not
	// rendered again).
	webJSON := mustView(t, c, Query{Format: JSON, Chart: "web"})
	put(c, l, mkCV(t, nil, "api", "0.2.0", t0.Add(time.Hour)))
	if got := mustView(t, c, Query{Format: JSON, Chart: "web"}); got != webJSON {
		t.Errorf("another chart's upload rendered web's index again")
	}
	for _, f := range []Format{YAML, JSON} {
		if got := mustView(t, c, Query{Format: f, Chart: "web"}).ETag; got != before[f] {
			t.Errorf("format %d: ETag changed with another chart", f)
		}
	}

	// Its own chart changes: a new ETag.
	put(c, l, mkCV(t, nil, "web", "0.1.0", t0.Add(2*time.Hour)))
	for _, f := range []Format{YAML, JSON} {
		if got := mustView(t, c, Query{Format: f, Chart: "web"}).ETag; got == before[f] {
			t.Errorf("format %d: ETag kept after web changed", f)
		}
	}
	del(c, l, "web", "0.1.0")
	for _, f := range []Format{YAML, JSON} {
		if got := mustView(t, c, Query{Format: f, Chart: "web"}).ETag; got != before[f] {
			t.Errorf("format %d: same content, different ETag", f)
		}
	}

	if _, err := c.View(context.Background(), "r", Query{Chart: "nope"}); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("unknown chart: %v", err)
	}
	// The last version of a chart goes: so does its index.
	for _, cv := range cvs {
		if cv.Name == "api" {
			del(c, l, cv.Name, cv.Version)
		}
	}
	del(c, l, "api", "0.2.0")
	if _, err := c.View(context.Background(), "r", Query{Format: JSON, Chart: "api"}); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("deleted chart: %v", err)
	}
}

func TestLatestView(t *testing.T) {
	c, l := setup(t, viewCVs(t)...)
	for _, f := range []Format{YAML, JSON} {
		ix := mustView(t, c, Query{Format: f, Latest: 2})
		hi := loadWithHelm(t, ix.Body)
		var got []string
		for _, v := range hi.Entries["web"] {
			got = append(got, v.Version)
		}
		// SemVer order, pre-releases count.
		if strings.Join(got, " ") != "v2.0 1.10.0" || len(hi.Entries["api"]) != 1 || len(hi.Entries) != 4 {
			t.Errorf("format %d: newest 2 = %v, %v", f, got, hi.Entries)
		}
	}
	two, three := mustView(t, c, Query{Format: JSON, Latest: 2}).ETag, mustView(t, c, Query{Format: JSON, Latest: 3}).ETag

	// A version older than web's newest two: the newest-2 index is the
	// same, the newest-3 one is too (1.10.0-rc.1 is the third).
	put(c, l, mkCV(t, nil, "web", "0.0.1", t0))
	if mustView(t, c, Query{Format: JSON, Latest: 2}).ETag != two || mustView(t, c, Query{Format: JSON, Latest: 3}).ETag != three {
		t.Errorf("an old version changed the newest-N index")
	}
	// A version among the newest two of any chart changes it.
	put(c, l, mkCV(t, nil, "api", "9.0.0", t0))
	if mustView(t, c, Query{Format: JSON, Latest: 2}).ETag == two {
		t.Errorf("a new newest version left the newest-N index as it was")
	}
	for _, n := range []int{-1, MaxLatest + 1} {
		if _, err := c.View(context.Background(), "r", Query{Latest: n}); chartctl.ErrorCode(err) != chartctl.EINVALID {
			t.Errorf("latest %d: %v", n, err)
		}
	}
}

// TestJSONAfterYAML: a repository first read as YAML serves JSON too, and
// keeps both current.
func TestJSONAfterYAML(t *testing.T) {
	c, l := setup(t, viewCVs(t)...)
	mustView(t, c, Query{})
	j := mustView(t, c, Query{Format: JSON})
	put(c, l, mkCV(t, nil, "api", "3.0.0", t0.Add(time.Hour)))
	j2, y2 := mustView(t, c, Query{Format: JSON}), mustView(t, c, Query{})
	if j2.ETag == j.ETag || !reflect.DeepEqual(loadWithHelm(t, j2.Body), loadWithHelm(t, y2.Body)) {
		t.Errorf("JSON index not kept current")
	}
}

// TestJSONFromStoredEntry: a version the store hands over as its stored
// entry alone (what IndexEntry returns) renders the same JSON as its full
// record, so replicas agree byte for byte.
func TestJSONFromStoredEntry(t *testing.T) {
	full := mkCV(t, richMetadata(), "web", "1.2.3", t0)
	stored := &chartctl.ChartVersion{Repository: "r", Name: "web", Version: "1.2.3", CreatedAt: t0, IndexEntry: RenderEntry(full)}
	if a, b := renderJSON(full), renderJSON(stored); !bytes.Equal(a, b) {
		t.Fatalf("full record %s\nstored entry %s", a, b)
	}
}
