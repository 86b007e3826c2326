package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/testkit"
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

// TestOCIMarkdownColumns checks that zot's columns and the targets
// against the faster peer come only with zot, that the table without it
// keeps its columns, and that the floors' targets and per-round ratios are
// there either way.
func TestOCIMarkdownColumns(t *testing.T) {
	rows := []*OCIRow{
		{Key: "manifest", Label: "manifest", Bytes: 5, Rates: map[string][]float64{"chartctl": {90, 80}, "distribution": {10, 10}, "zot": {20, 20}, "nginx": {200, 200}, "bare": {100, 100}}},
		{Key: "tags-300", Label: "tags/list", Bytes: 10, Rates: map[string][]float64{"chartctl": {300}, "distribution": {100}, "zot": {150}, "nginx": {400}, "bare": {500}}},
		{Key: "raw-push", Label: "raw push", Rates: map[string][]float64{"chartctl": {30}, "distribution": {20}, "zot": {40}}},
		{Key: "tags-big-page", Label: "big page", Bytes: 7, Rates: map[string][]float64{"chartctl": {500, 600}, "distribution": {5, 6}, "zot": {0.5, 0}, "nginx": {700, 700}, "bare": {800, 800}}},
	}
	without := (&OCIResults{Config: OCIConfig{Distribution: "registry"}, Rows: rows}).Markdown()
	for _, want := range []string{
		"| operation | bytes | chartctl /s | Distribution /s | nginx /s | bare net/http /s | ÷ Distribution | ÷ bare | ÷ nginx |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		"| tags/list | 10 | 300 | 100 | 400 | 500 | 3.00 | 0.60 | 0.75 |\n",
		"| raw push | – | 30.0 | 20.0 | – | – | 1.50 | – | – |\n",
		"\nPer round (chartctl ÷ Distribution): manifest 9.00/8.00; tags-300 3.00; raw-push 1.50; tags-big-page ",
		"\nPer round (chartctl ÷ bare): manifest 0.90/0.80; tags-300 0.60; tags-big-page ",
		"| manifest GET ≥ 0.9 of the bare handler | bare net/http | 100 | 0.85 | ≥ 0.9: **missed** |\n",
		"| raw push ≥ 2× Distribution | Distribution | 20.0 | 1.50 | ≥ 2.0: **missed** |\n",
	} {
		if !strings.Contains(without, want) {
			t.Errorf("without zot, missing %q in\n%s", want, without)
		}
	}
	if strings.Contains(without, "zot") || strings.Contains(without, "faster peer (whole list)") {
		t.Errorf("without zot, zot or a target against the faster peer shown:\n%s", without)
	}
	with := (&OCIResults{Config: OCIConfig{Distribution: "registry", Zot: "zot"}, Rows: rows}).Markdown()
	for _, want := range []string{
		"| chartctl /s | Distribution /s | zot /s | nginx /s | bare net/http /s | ÷ Distribution | ÷ zot | ÷ bare | ÷ nginx |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		"| tags/list | 10 | 300 | 100 | 150 | 400 | 500 | 3.00 | 2.00 | 0.60 | 0.75 |\n",
		"\nPer round (chartctl ÷ zot): manifest 4.50/4.00; tags-300 2.00; raw-push 0.75; tags-big-page ",
		"| `tags/list` ≥ 1.5× the faster peer (whole list) | zot | 150 | 2.00 | ≥ 1.5: met |\n",
		"| raw push ≥ 2× Distribution | Distribution | 20.0 | 1.50 | ≥ 2.0: **missed** |\n",
		"| big page | 7 | 550 | 5.5 | 0.2 | 700 | 800 | 100.00 | 2200.00 | 0.69 | 0.79 |\n",
		"tags-big-page 1000.00/–;",
		"\nNo request completed within the time a server had for it in a round (its ratios there are \"–\"): tags-big-page on zot in round 2.\n",
	} {
		if !strings.Contains(with, want) {
			t.Errorf("with zot, missing %q in\n%s", want, with)
		}
	}
}

// TestMeasureReadSlices: every server of a read is measured in each of the
// slices, taking turns, and its rate is its requests over its slices'
// time; a server a read has no path on is not measured.
func TestMeasureReadSlices(t *testing.T) {
	var mu sync.Mutex
	var order []string
	last := ""
	// Each slice's load opens its own connections, so the order of new
	// connections is the order of the slices (a request a slice's end
	// cancelled can still reach its handler later).
	serve := func(name string) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("ok"))
		}))
		srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			mu.Lock()
			if st == http.StateNew && name != last {
				order = append(order, name)
				last = name
			}
			mu.Unlock()
		}
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.URL
	}
	bases := map[string]string{"chartctl": serve("chartctl"), "bare": serve("bare"), "nginx": serve("nginx")}
	r := ociRead{key: "manifest", paths: map[string]string{"chartctl": "/m", "bare": "/m"}}
	cfg := OCIConfig{Duration: 600 * time.Millisecond, Slices: 3, Conns: 2}
	rates, err := measureRead(context.Background(), r, bases, cfg, "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rates) != 2 || rates["chartctl"] <= 0 || rates["bare"] <= 0 {
		t.Fatalf("rates %v, want chartctl's and bare's", rates)
	}
	// Slices chartctl+bare, bare+chartctl, chartctl+bare: rotated, the
	// runs of one server's connections are four (six without the rotation).
	if want := []string{"chartctl", "bare", "chartctl", "bare"}; !slices.Equal(order, want) {
		t.Fatalf("runs of connections by server %v, want %v", order, want)
	}
}

func TestOCIConfigSlices(t *testing.T) {
	base := OCIConfig{N: 10, BigTags: 200, Binary: "x", Rounds: 1, Duration: time.Second, Pushes: 1, Conns: 1}
	for _, tc := range []struct {
		duration time.Duration
		slices   int
	}{{500 * time.Millisecond, 2}, {time.Second, 4}, {3 * time.Second, 12}, {20 * time.Second, 20}} {
		c := base
		c.Duration = tc.duration
		if err := c.Validate(); err != nil || c.Slices != tc.slices {
			t.Errorf("no slices given, %v: %v, slices %d, want none and %d", tc.duration, err, c.Slices, tc.slices)
		}
	}
	c := base
	c.Slices = 1
	if err := c.Validate(); err != nil || c.Slices != 1 {
		t.Fatalf("one slice: %v, slices %d", err, c.Slices)
	}
	c = base
	c.Slices = 20
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "100ms a slice") {
		t.Fatalf("50ms slices: %v", err)
	}
}

// TestMeasurePushesSlices: every chart reaches every server once, the
// servers taking turns slice by slice in a rotated order.
func TestMeasurePushesSlices(t *testing.T) {
	charts := make([]*testkit.OCIChart, 5)
	for i := range charts {
		charts[i] = &testkit.OCIChart{Tag: fmt.Sprintf("1.0.%d", i)}
	}
	var got []string
	rates, err := measurePushes([]string{"a", "b"}, charts, 3, 0, nil, "", func(srv string, c *testkit.OCIChart) error {
		got = append(got, srv+" "+c.Tag)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a 1.0.0", "b 1.0.0", "b 1.0.1", "b 1.0.2", "a 1.0.1", "a 1.0.2", "a 1.0.3", "a 1.0.4", "b 1.0.3", "b 1.0.4"}
	if !slices.Equal(got, want) {
		t.Fatalf("pushes %v, want %v", got, want)
	}
	if rates["a"] <= 0 || rates["b"] <= 0 || len(rates) != 2 {
		t.Fatalf("rates %v", rates)
	}
	// The next round starts with the next server.
	got = nil
	if _, err := measurePushes([]string{"a", "b"}, charts[:2], 2, 1, nil, "", func(srv string, c *testkit.OCIChart) error {
		got = append(got, srv+" "+c.Tag)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b 1.0.0", "a 1.0.0", "a 1.0.1", "b 1.0.1"}; !slices.Equal(got, want) {
		t.Fatalf("pushes of round 1 %v, want %v", got, want)
	}
	if _, err := measurePushes([]string{"a"}, charts, 2, 0, nil, "", func(string, *testkit.OCIChart) error { return errors.New("refused") }); err == nil || !strings.Contains(err.Error(), "1.0.0 to a: refused") {
		t.Fatalf("a refused push: %v", err)
	}
}

// TestMarkdownReplicas: a run beside idle replicas says so, and says
// whether the measured one answered from its memos.
func TestMarkdownReplicas(t *testing.T) {
	rows := []*OCIRow{{Key: "raw-push", Label: "raw push", Rates: map[string][]float64{"chartctl": {30}, "distribution": {20}}}}
	md := (&OCIResults{Config: OCIConfig{Distribution: "registry", Replicas: 1, ServeArgs: []string{"--database=postgres://x"}}, Memos: "1", Rows: rows}).Markdown()
	want := "1 more chartctl replica(s) ran on the same database and blob store, idle: the measured replica was not alone on its database (`chartctl_registry_memos` 1 when the rounds began"
	if !strings.Contains(md, want) {
		t.Errorf("report lacks %q:\n%s", want, md)
	}
}
