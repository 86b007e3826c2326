package helmindex

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	yamlv2 "go.yaml.in/yaml/v2"
)

// jsonNames returns the JSON names (with their options) of t's fields, the
// fields of embedded structs inlined, in declaration order.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			out = append(out, jsonNames(ft)...)
			continue
		}
		out = append(out, f.Tag.Get("json"))
	}
	return out
}

// The typed JSON entry has exactly the fields (names and omitempty rules)
// of the index entry the YAML is written from, and declares them in the
// order a map's keys are written, so that json.Marshal writes what
// yaml.YAMLToJSON wrote.
func TestJSONEntryFieldOrder(t *testing.T) {
	for _, c := range []struct {
		typed, from reflect.Type
	}{
		{reflect.TypeFor[jsonEntry](), reflect.TypeFor[indexEntry]()},
		{reflect.TypeFor[jsonMaintainer](), reflect.TypeFor[chart.Maintainer]()},
		{reflect.TypeFor[jsonDependency](), reflect.TypeFor[chart.Dependency]()},
	} {
		got := jsonNames(c.typed)
		names := make([]string, len(got))
		for i, n := range got {
			names[i], _, _ = strings.Cut(n, ",")
		}
		if !sort.StringsAreSorted(names) {
			t.Errorf("%s: fields not in the order of their JSON names: %q", c.typed, names)
		}
		want := jsonNames(c.from)
		sort.Strings(want)
		sorted := append([]string(nil), got...)
		sort.Strings(sorted)
		if !reflect.DeepEqual(sorted, want) {
			t.Errorf("%s has JSON fields %q, %s has %q", c.typed, sorted, c.from, want)
		}
		for i := range c.typed.NumField() {
			f := c.typed.Field(i)
			if y, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.Tag.Get("yaml") != y {
				t.Errorf("%s.%s: yaml name %q, JSON name %q", c.typed, f.Name, f.Tag.Get("yaml"), y)
			}
		}
	}
}

// jsonCVs are versions whose entries exercise what the YAML writer quotes,
// folds and escapes.
func jsonCVs(t *testing.T) []*chartctl.ChartVersion {
	t.Helper()
	rich := richMetadata()
	// import-values maps take the generic conversion; this one does not.
	plain := richMetadata()
	plain.Dependencies = []*chart.Dependency{
		{Name: "redis", Repository: ""}, {Name: "db", Version: "1.x", Repository: "https://x", ImportValues: []any{"a", "b"}, Tags: []string{"", "t"}},
	}
	long := &chart.Metadata{
		APIVersion:  "v1",
		Description: strings.Repeat("a long description that YAML folds over several lines ", 6) + "<b>&amp;</b> \u2028 \"q\" 'q' \\ end",
		Keywords:    []string{"", "yes", "no", "~", "0x1f", "1e3", "0777", "2026-01-02", ": x", "a\tb"},
		Maintainers: []*chart.Maintainer{{Name: "only"}, {Email: "e@x"}},
		Annotations: map[string]string{"true": "false", "1": "2.0", "a:b": "{x: y}", "empty": ""},
		Sources:     []string{"https://s"},
		AppVersion:  "1.10",
		Type:        "library",
	}
	cvs := []*chartctl.ChartVersion{
		mkCV(t, rich, "web", "1.2.3", t0),
		mkCV(t, plain, "web", "1.2.4", t0.Add(time.Second)),
		mkCV(t, long, "null", "0.0.1-rc.1+build.5", t0.Add(time.Minute)),
		mkCV(t, nil, "1.0", "2.0.0", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	}
	signed := mkCV(t, nil, "signed", "1.0.0", t0)
	signed.Verification = &chartctl.Verification{Status: chartctl.VerificationVerified, Signatures: []chartctl.Signature{{Kind: "cosign-key", Identity: "ci@example.com", Trust: "k", VerifiedAt: &t0}}}
	cvs = append(cvs, signed)
	for i := range 50 {
		cvs = append(cvs, mkCV(t, nil, fmt.Sprintf("c%d", i%7), fmt.Sprintf("1.%d.0", i), t0.Add(time.Duration(i)*time.Hour)))
	}
	return cvs
}

// The fast conversion writes, entry by entry and in batches, the bytes
// yaml.YAMLToJSON writes for the same stored entry, so the JSON index and
// its ETag are what they were, on every replica.
func TestFastJSONMatchesYAMLToJSON(t *testing.T) {
	cvs := jsonCVs(t)
	frags := make([][]byte, len(cvs))
	for i, cv := range cvs {
		frags[i] = RenderEntry(cv)
	}
	// An entry an older renderer wrote with a field jsonEntry lacks, and
	// one with a comment.
	frags = append(frags,
		append(bytes.Clone(frags[3]), "    removed: false\n"...),
		append(bytes.Clone(frags[3]), "    # stored\n"...))
	want := make([][]byte, len(frags))
	for i, f := range frags {
		if want[i] = genericJSON(f); want[i] == nil {
			t.Fatalf("entry %d does not convert:\n%s", i, f)
		}
	}
	batch := make([][]byte, len(frags))
	entriesToJSON(frags, batch)
	for i, f := range frags {
		one := make([][]byte, 1)
		entriesToJSON([][]byte{f}, one)
		if !bytes.Equal(one[0], want[i]) {
			t.Errorf("entry %d alone:\n%s\nwant\n%s", i, one[0], want[i])
		}
		if !bytes.Equal(batch[i], want[i]) {
			t.Errorf("entry %d in a batch:\n%s\nwant\n%s", i, batch[i], want[i])
		}
	}

	// The typed path is the one taken (else this test compares the
	// generic conversion with itself): every entry this package renders
	// decodes strictly into jsonEntry, and all but import-values maps
	// marshal from it.
	for i, f := range frags[:len(cvs)] {
		var es []jsonEntry
		if err := yamlv2.UnmarshalStrict(f, &es); err != nil || len(es) != 1 {
			t.Fatalf("entry %d does not decode: %v\n%s", i, err, f)
		}
		if es[0].typed() == (i == 0) {
			t.Errorf("entry %d: typed() = %v", i, es[0].typed())
		}
	}
}

// A stored entry that is not YAML still lists its version, from the record.
func TestJSONFromBrokenEntry(t *testing.T) {
	cv := mkCV(t, nil, "web", "1.0.0", t0)
	want := recordJSON(cv)
	cv.IndexEntry = []byte("  - name: [unclosed\n")
	if got := renderJSON(cv); !bytes.Equal(got, want) {
		t.Fatalf("got %s, want %s", got, want)
	}
	cvs := []*chartctl.ChartVersion{cv, mkCV(t, nil, "web", "1.0.1", t0)}
	_, jfrags := renderAll(cvs, true)
	if !bytes.Equal(jfrags[0], want) || !bytes.Equal(jfrags[1], renderJSON(cvs[1])) {
		t.Fatalf("batch: %s", bytes.Join(jfrags, []byte("\n")))
	}
}

// storedJSONVersions returns versions as a store hands them out: with
// their stored YAML entry and, when withJSON, the JSON entry stored at
// upload (RenderEntryJSON).
func storedJSONVersions(t *testing.T, withJSON bool) []*chartctl.ChartVersion {
	t.Helper()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var cvs []*chartctl.ChartVersion
	for i := range 700 {
		md := &chart.Metadata{APIVersion: "v2", Description: "The chart", AppVersion: "1.0", Keywords: []string{"k"},
			Maintainers:  []*chart.Maintainer{{Name: "ops", Email: "ops@example.com"}},
			Dependencies: []*chart.Dependency{{Name: "db", Version: "1.x", Repository: "https://example.com"}},
			Annotations:  map[string]string{"category": "web"}}
		cv := mkCV(t, md, fmt.Sprintf("chart%d", i%7), fmt.Sprintf("1.%d.0", i), t0.Add(time.Duration(i)*time.Second))
		cv.IndexEntry = RenderEntry(cv)
		if withJSON {
			cv.IndexEntryJSON = RenderEntryJSON(cv)
		}
		cvs = append(cvs, cv)
	}
	return cvs
}

// A JSON index built from the JSON entries stored at upload is the very
// index (bytes and ETag) converted from the YAML entries, in one load
// and after a Refresh; and the stored entries are what it lists, not a
// conversion (issue #32: the first JSON index after a restart parses no
// YAML).
func TestStoredJSONEntries(t *testing.T) {
	q := Query{Format: JSON}
	converted, _ := setup(t, storedJSONVersions(t, false)...)
	stored, sl := setup(t, storedJSONVersions(t, true)...)
	want, err := converted.View(context.Background(), "r", q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := stored.View(context.Background(), "r", q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Body, want.Body) || got.ETag != want.ETag {
		t.Fatalf("JSON index from stored entries differs from the converted one (%d vs %d bytes)", len(got.Body), len(want.Body))
	}
	// EntriesJSON (the backfill) converts to the same bytes.
	for i, j := range EntriesJSON(storedJSONVersions(t, false)) {
		if want := sl.cvs[i].IndexEntryJSON; !bytes.Equal(j, want) {
			t.Fatalf("EntriesJSON[%d] = %s, want %s", i, j, want)
		}
	}

	// The stored JSON entry is used as it is: a marked one shows.
	cvs := storedJSONVersions(t, true)
	cvs[3].IndexEntryJSON = []byte(`{"name":"chart3","version":"1.3.0","marked":true,"urls":[]}`)
	marked, ml := setup(t, cvs...)
	ix, err := marked.View(context.Background(), "r", q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ix.Body, []byte(`"marked":true`)) {
		t.Fatal("the stored JSON entry is not in the JSON index")
	}
	// A JSON entry without its YAML entry (a full record) is ignored.
	bare := *cvs[4]
	bare.IndexEntry, bare.IndexEntryJSON = nil, []byte(`{"bogus":true}`)
	cvs[4] = &bare
	ml.set(cvs...)
	marked.Refresh(context.Background(), "r", bare.Name, bare.Version)
	ix, err = marked.View(context.Background(), "r", q)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ix.Body, []byte(`"bogus"`)) || !bytes.Contains(ix.Body, []byte(`"marked":true`)) {
		t.Fatal("a JSON entry stored without its YAML entry was used, or a Refresh lost a stored one")
	}

	// After a Refresh of a version with a stored entry the index is
	// still the converted one's bytes.
	stored.Refresh(context.Background(), "r", "chart0", "1.0.0")
	got, err = stored.View(context.Background(), "r", q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Fatal("JSON index after a Refresh differs from the converted one")
	}
}
