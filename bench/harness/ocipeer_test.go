package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

func TestWriteZotTags(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "big", "big")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	const d = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	const other = "sha256:0000000000000000000000000000000000000000000000000000000000000002"
	index := `{"schemaVersion":2,"manifests":[` +
		`{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + other + `","size":10,"annotations":{"org.opencontainers.image.ref.name":"0.9.0"}},` +
		`{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + d + `","size":351,"annotations":{"org.opencontainers.image.ref.name":"1.0.0"}}]}`
	if err := os.WriteFile(filepath.Join(repo, "index.json"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeZotTags(root, "big/big", d, 1500); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(repo, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got ocispec.Index
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Manifests) != 1501 {
		t.Fatalf("%d manifests, want 1501", len(got.Manifests))
	}
	if m := got.Manifests[0]; m.Digest.String() != other || m.Annotations[ocispec.AnnotationRefName] != "0.9.0" {
		t.Errorf("other manifest lost: %+v", m)
	}
	seen := map[string]bool{}
	for _, m := range got.Manifests[1:] {
		if m.Digest.String() != d || m.Size != 351 || m.MediaType != ocispec.MediaTypeImageManifest {
			t.Fatalf("descriptor %+v is not the pushed one", m)
		}
		seen[m.Annotations[ocispec.AnnotationRefName]] = true
	}
	if len(seen) != 1500 || !seen[bigTag(0)] || !seen[bigTag(1499)] {
		t.Errorf("%d distinct tags, want 1500 from %s to %s", len(seen), bigTag(0), bigTag(1499))
	}
	if err := writeZotTags(root, "big/big", "sha256:ff", 3); err == nil {
		t.Error("a manifest that was never pushed was tagged")
	}
}

func TestDescribeZot(t *testing.T) {
	out := `{"time":"2026-11-29T10:23:49Z","level":"info","message":"version","distribution-spec":"1.1.1","commit":"v2.1.20","binary-type":"minimal","go version":"go1.26.8","goroutine":1}` + "\n"
	if got, want := describeZot("/x/zot", []byte(out)), "/x/zot zot v2.1.20, minimal build, go1.26.8"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := describeZot("/x/zot", []byte("zot 2\n")); got != "zot 2" {
		t.Errorf("unparsed output: got %q", got)
	}
}

// TestOCIMarkdownColumns checks that zot's columns and the targets table
// come only with zot, and that the table without it keeps its columns.
func TestOCIMarkdownColumns(t *testing.T) {
	rows := []*OCIRow{
		{Key: "tags-300", Label: "tags/list", Bytes: 10, Rates: map[string][]float64{"chartctl": {300}, "distribution": {100}, "zot": {150}, "nginx": {400}, "bare": {500}}},
		{Key: "raw-push", Label: "raw push", Rates: map[string][]float64{"chartctl": {30}, "distribution": {20}, "zot": {40}}},
	}
	without := (&OCIResults{Config: OCIConfig{Distribution: "registry"}, Rows: rows}).Markdown()
	for _, want := range []string{
		"| operation | bytes | chartctl /s | Distribution /s | nginx /s | bare net/http /s | ÷ Distribution | ÷ bare | ÷ nginx |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		"| tags/list | 10 | 300 | 100 | 400 | 500 | 3.00 | 0.60 | 0.75 |\n",
		"| raw push | – | 30.0 | 20.0 | – | – | 1.50 | – | – |\n",
		"\nPer round (chartctl ÷ Distribution): tags-300 3.00; raw-push 1.50;\n",
	} {
		if !strings.Contains(without, want) {
			t.Errorf("without zot, missing %q in\n%s", want, without)
		}
	}
	if strings.Contains(without, "zot") || strings.Contains(without, "Targets") {
		t.Errorf("without zot, zot or targets shown:\n%s", without)
	}
	with := (&OCIResults{Config: OCIConfig{Distribution: "registry", Zot: "zot"}, Rows: rows}).Markdown()
	for _, want := range []string{
		"| chartctl /s | Distribution /s | zot /s | nginx /s | bare net/http /s | ÷ Distribution | ÷ zot | ÷ bare | ÷ nginx |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		"| tags/list | 10 | 300 | 100 | 150 | 400 | 500 | 3.00 | 2.00 | 0.60 | 0.75 |\n",
		"\nPer round (chartctl ÷ zot): tags-300 2.00; raw-push 0.75;\n",
		"| `tags/list` ≥ 1.5× the faster peer (whole list) | zot | 150 | 2.00 | ≥ 1.5: met |\n",
		"| raw push ≥ 2× Distribution | Distribution | 20.0 | 1.50 | ≥ 2.0: **missed** |\n",
	} {
		if !strings.Contains(with, want) {
			t.Errorf("with zot, missing %q in\n%s", want, with)
		}
	}
}
