package helmindex

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	yamlv2 "go.yaml.in/yaml/v2"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// mkCV returns a chart version record as the upload path stores it, with
// metadata md (name and version filled in).
func mkCV(tb testing.TB, md *chart.Metadata, name, version string, created time.Time) *chartctl.ChartVersion {
	tb.Helper()
	if md == nil {
		md = &chart.Metadata{APIVersion: "v2", Description: "The " + name + " chart", AppVersion: "1.0"}
	}
	md.Name, md.Version = name, version
	// Records are validated (and so sanitized) at upload.
	if err := md.Validate(); err != nil {
		tb.Fatal(err)
	}
	js, err := json.Marshal(md)
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256([]byte(name + version))
	return &chartctl.ChartVersion{
		Repository: "r", Name: name, Version: version,
		AppVersion: md.AppVersion, Description: md.Description, Keywords: md.Keywords,
		Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: 1234,
		CreatedAt: created, Metadata: js,
	}
}

// richMetadata exercises every Chart.yaml field and YAML's quoting rules.
func richMetadata() *chart.Metadata {
	return &chart.Metadata{
		Home:        "https://example.com",
		Sources:     []string{"https://github.com/example/chart"},
		Description: "Line one\nline two: with a colon\n\n  indented after a blank line",
		Keywords:    []string{"true", "1.0", "null", "- dash", "#hash", "ünï"},
		Maintainers: []*chart.Maintainer{{Name: "Jane", Email: "jane@example.com", URL: "https://jane.example"}},
		Icon:        "https://example.com/icon.png",
		APIVersion:  "v2",
		Condition:   "web.enabled",
		Tags:        "front,back",
		AppVersion:  "1.16.0",
		Deprecated:  true,
		Annotations: map[string]string{"artifacthub.io/changes": "- kind: added\n  description: x\n", "category": "Web", "notes": "para one\n\n  indented para\n\n\nlast  \n", "quoted": "  leading: \"x\" 'y' \t tab"},
		KubeVersion: ">=1.22.0-0",
		Dependencies: []*chart.Dependency{
			{Name: "redis", Version: "~17.0", Repository: "oci://registry/charts", Condition: "redis.enabled", Tags: []string{"cache"}, Enabled: true, ImportValues: []any{"data", map[string]any{"child": "a", "parent": "b"}}, Alias: "cache"},
		},
		Type: "application",
	}
}

// helmIndex builds, with Helm's own code, the index Helm would write for
// cvs, and returns its bytes (as repo.IndexFile.WriteFile writes them).
func helmIndex(tb testing.TB, cvs []*chartctl.ChartVersion, generated time.Time) []byte {
	tb.Helper()
	hi := repo.NewIndexFile()
	for _, cv := range cvs {
		md := new(helmchart.Metadata)
		if err := json.Unmarshal(cv.Metadata, md); err != nil {
			tb.Fatal(err)
		}
		if err := hi.MustAdd(md, "charts/"+chart.ArchiveFileName(cv.Name, cv.Version), "", strings.TrimPrefix(cv.Digest, "sha256:")); err != nil {
			tb.Fatal(err)
		}
		vs := hi.Entries[cv.Name]
		vs[len(vs)-1].Created = cv.CreatedAt.UTC()
	}
	hi.SortEntries()
	hi.Generated = generated
	hi.ServerInfo = map[string]any{"contextPath": "/helm"}
	b, err := yaml.Marshal(hi)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// loadWithHelm parses an index with Helm's loader.
func loadWithHelm(tb testing.TB, body []byte) *repo.IndexFile {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "index.yaml")
	if err := os.WriteFile(p, body, 0o600); err != nil {
		tb.Fatal(err)
	}
	ix, err := repo.LoadIndexFile(p)
	if err != nil {
		tb.Fatalf("Helm cannot load the index: %v\n%s", err, body)
	}
	return ix
}

// staticLoader serves a fixed list and counts its calls.
type staticLoader struct {
	mu    sync.Mutex
	cvs   []*chartctl.ChartVersion
	pos   map[string]int // name\x00version → index in cvs
	calls atomic.Int32
}

func (l *staticLoader) load(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
	l.calls.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*chartctl.ChartVersion(nil), l.cvs...), nil
}

func (l *staticLoader) set(cvs ...*chartctl.ChartVersion) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cvs, l.pos = cvs, nil
}

// loadVersion reads one version, for Refresh.
func (l *staticLoader) loadVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.find(name, version); ok {
		return l.cvs[i], nil
	}
	return nil, chartctl.Errorf(chartctl.ENOTFOUND, "no version %s %s", name, version)
}

// find returns the position of a version in l.cvs; l.mu is held. The
// index is rebuilt when stale so benchmarks measure the cache, not a scan.
func (l *staticLoader) find(name, version string) (int, bool) {
	if l.pos == nil || len(l.pos) != len(l.cvs) {
		l.pos = make(map[string]int, len(l.cvs))
		for i, cv := range l.cvs {
			l.pos[cv.Name+"\x00"+cv.Version] = i
		}
	}
	i, ok := l.pos[name+"\x00"+version]
	return i, ok
}

// commit stores cv (replacing the same name and version), as an upload
// commits to the store.
func (l *staticLoader) commit(cv *chartctl.ChartVersion) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.find(cv.Name, cv.Version); ok {
		l.cvs[i] = cv
		return
	}
	l.cvs = append(l.cvs, cv)
	l.pos[cv.Name+"\x00"+cv.Version] = len(l.cvs) - 1
}

// remove deletes a version from the store.
func (l *staticLoader) remove(name, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.find(name, version)
	if !ok {
		return
	}
	last := len(l.cvs) - 1
	l.cvs[i] = l.cvs[last]
	l.pos[l.cvs[i].Name+"\x00"+l.cvs[i].Version] = i
	l.cvs = l.cvs[:last]
	delete(l.pos, name+"\x00"+version)
}

// put commits cv to the store and refreshes the cache, as the server does
// after an upload.
func put(c *Cache, l *staticLoader, cv *chartctl.ChartVersion) {
	l.commit(cv)
	c.Refresh(context.Background(), "r", cv.Name, cv.Version)
}

// del deletes a version from the store and refreshes the cache.
func del(c *Cache, l *staticLoader, name, version string) {
	l.remove(name, version)
	c.Refresh(context.Background(), "r", name, version)
}

// clock is a settable test clock.
func setup(tb testing.TB, cvs ...*chartctl.ChartVersion) (*Cache, *staticLoader) {
	tb.Helper()
	l := &staticLoader{cvs: cvs}
	return New(l.load, Options{LoadVersion: l.loadVersion}), l
}

func mustGet(tb testing.TB, c *Cache) *Index {
	tb.Helper()
	ix, err := c.Get(context.Background(), "r")
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

func TestIndexIsWhatHelmWrites(t *testing.T) {
	cvs := []*chartctl.ChartVersion{
		mkCV(t, richMetadata(), "web", "1.2.3", t0),
		mkCV(t, nil, "web", "1.10.0", t0.Add(time.Minute)),
		mkCV(t, nil, "web", "1.10.0-rc.1", t0.Add(2*time.Minute)),
		mkCV(t, nil, "web", "v2.0", t0.Add(3*time.Minute)),
		mkCV(t, nil, "web", "0.9.0+build.7", t0.Add(4*time.Minute)),
		mkCV(t, nil, "api", "0.1.0", t0.Add(5*time.Minute)),
		mkCV(t, nil, "true", "1.0.0", t0.Add(6*time.Minute)),
		mkCV(t, nil, "1.0", "1.0.0", t0.Add(7*time.Minute)),
		mkCV(t, nil, "app10", "1.0.0", t0),
		mkCV(t, nil, "app9", "1.0.0", t0),
		mkCV(t, nil, "App", "1.0.0", t0),
		mkCV(t, nil, "a_b.c-d", "1.0.0", t0),
		mkCV(t, &chart.Metadata{APIVersion: "v1"}, "old", "1.0.0", t0),
	}
	c, _ := setup(t, cvs...)
	ix := mustGet(t, c)
	if !ix.Generated.Equal(t0.Add(7 * time.Minute)) {
		t.Errorf("generated = %v, want the newest upload", ix.Generated)
	}
	want := helmIndex(t, cvs, ix.Generated)
	if !bytes.Equal(ix.Body, want) {
		t.Fatalf("index differs from Helm's:\n--- ours\n%s\n--- Helm's\n%s", ix.Body, want)
	}

	// Helm loads it, with every field equal to what it records itself.
	ours, helms := loadWithHelm(t, ix.Body), loadWithHelm(t, want)
	if !reflect.DeepEqual(ours, helms) {
		t.Errorf("Helm loads a different index from ours")
	}
	web := ours.Entries["web"]
	var got []string
	for _, v := range web {
		got = append(got, v.Version)
	}
	if strings.Join(got, " ") != "v2.0 1.10.0 1.10.0-rc.1 1.2.3 0.9.0+build.7" {
		t.Errorf("order = %v", got)
	}
	if web[3].URLs[0] != "charts/web-1.2.3.tgz" || web[3].Digest != strings.TrimPrefix(cvs[0].Digest, "sha256:") || !web[3].Created.Equal(t0) {
		t.Errorf("entry = %+v", web[3])
	}
	if web[3].Maintainers[0].Email != "jane@example.com" || web[3].Dependencies[0].Alias != "cache" || web[3].Annotations["category"] != "Web" || !web[3].Deprecated {
		t.Errorf("metadata lost: %+v", web[3].Metadata)
	}
	if ours.ServerInfo["contextPath"] != "/helm" {
		t.Errorf("serverInfo = %v", ours.ServerInfo)
	}
	if ours.Entries["true"] == nil || ours.Entries["1.0"] == nil {
		t.Errorf("names that YAML would retype are lost: %v", ours.Entries)
	}
}

func TestEmptyIndex(t *testing.T) {
	c, _ := setup(t)
	ix := mustGet(t, c)
	if !ix.Generated.Equal(time.Unix(0, 0)) {
		t.Errorf("generated = %v, want the Unix epoch: an empty index has no upload time", ix.Generated)
	}
	if want := helmIndex(t, nil, ix.Generated); !bytes.Equal(ix.Body, want) {
		t.Fatalf("ours\n%s\nHelm's\n%s", ix.Body, want)
	}
	if hi := loadWithHelm(t, ix.Body); len(hi.Entries) != 0 || hi.APIVersion != "v1" {
		t.Errorf("loaded %+v", hi)
	}
}

func TestIncrementalChanges(t *testing.T) {
	a1 := mkCV(t, nil, "a", "1.0.0", t0)
	c, l := setup(t, a1)
	ix1 := mustGet(t, c)

	// The same record again: nothing changes.
	put(c, l, a1)
	if ix := mustGet(t, c); ix != ix1 {
		t.Error("identical Put changed the index")
	}

	// A new version, a new chart.
	a2 := mkCV(t, nil, "a", "2.0.0", t0.Add(time.Minute))
	b1 := mkCV(t, nil, "b", "0.1.0", t0.Add(time.Minute))
	put(c, l, a2)
	put(c, l, b1)
	ix2 := mustGet(t, c)
	if ix2.ETag == ix1.ETag || !ix2.Generated.Equal(a2.CreatedAt) {
		t.Errorf("ETag %s, generated %v after a change, want the newest upload %v", ix2.ETag, ix2.Generated, a2.CreatedAt)
	}
	if want := helmIndex(t, []*chartctl.ChartVersion{a1, a2, b1}, ix2.Generated); !bytes.Equal(ix2.Body, want) {
		t.Fatalf("after puts:\n%s\nwant\n%s", ix2.Body, want)
	}
	if again := mustGet(t, c); again != ix2 {
		t.Error("Get without a change rendered again")
	}

	// Replacing a version (a forced overwrite) replaces its one entry.
	a2b := mkCV(t, nil, "a", "2.0.0", t0.Add(2*time.Minute))
	a2b.Digest = "sha256:" + strings.Repeat("ab", 32)
	put(c, l, a2b)
	ix3 := mustGet(t, c)
	if ix3.ETag == ix2.ETag {
		t.Error("ETag unchanged after a replace")
	}
	hi := loadWithHelm(t, ix3.Body)
	if len(hi.Entries["a"]) != 2 || hi.Entries["a"][0].Digest != strings.Repeat("ab", 32) {
		t.Errorf("after replace: %+v", hi.Entries["a"])
	}
	if !ix3.Generated.Equal(a2b.CreatedAt) {
		t.Errorf("generated %v after a replace, want its upload time %v", ix3.Generated, a2b.CreatedAt)
	}

	// Deleting a version, then a chart's last version.
	del(c, l, "a", "1.0.0")
	del(c, l, "b", "0.1.0")
	ix4 := mustGet(t, c)
	if want := helmIndex(t, []*chartctl.ChartVersion{a2b}, ix4.Generated); !bytes.Equal(ix4.Body, want) {
		t.Fatalf("after deletes:\n%s\nwant\n%s", ix4.Body, want)
	}

	// Deleting what is not there changes nothing.
	del(c, l, "a", "9.9.9")
	del(c, l, "zzz", "1.0.0")
	if ix := mustGet(t, c); ix != ix4 {
		t.Error("deleting a missing version changed the index")
	}

	if n := l.calls.Load(); n != 1 {
		t.Errorf("loader called %d times; changes must not re-read the store", n)
	}

	// Putting and deleting back to an earlier content gives its bytes
	// back, generated included: the ETag follows the content alone.
	put(c, l, b1)
	del(c, l, "b", "0.1.0")
	if ix := mustGet(t, c); ix.ETag != ix4.ETag || !bytes.Equal(ix.Body, ix4.Body) {
		t.Errorf("after put+delete back to earlier content:\n%s\nwant\n%s", ix.Body, ix4.Body)
	}
}

// An index kept current change by change renders the bytes, and the
// ETag, that an index loaded from the store afresh renders (another
// replica, or this one after a restart), whatever the order of uploads
// and deletes: generated is the newest remaining upload, falling back to
// the next newest when that one is deleted, and the Unix epoch when none
// is left.
func TestGeneratedFollowsContent(t *testing.T) {
	c, l := setup(t)
	mustGet(t, c)
	old := mkCV(t, nil, "a", "1.0.0", t0)
	newest := mkCV(t, nil, "b", "1.0.0", t0.Add(time.Hour))
	middle := mkCV(t, nil, "a", "2.0.0", t0.Add(time.Minute))
	fresh := func() *Index {
		t.Helper()
		cvs, _ := l.load(context.Background(), "r")
		c2, _ := setup(t, cvs...)
		return mustGet(t, c2)
	}
	steps := []struct {
		what string
		do   func()
		want time.Time
	}{
		{"upload", func() { put(c, l, old) }, old.CreatedAt},
		{"newer upload", func() { put(c, l, newest) }, newest.CreatedAt},
		{"older upload", func() { put(c, l, middle) }, newest.CreatedAt},
		{"delete of the newest", func() { del(c, l, "b", "1.0.0") }, middle.CreatedAt},
		{"delete of an older one", func() { del(c, l, "a", "1.0.0") }, middle.CreatedAt},
		{"delete of the last", func() { del(c, l, "a", "2.0.0") }, time.Unix(0, 0)},
	}
	for _, st := range steps {
		st.do()
		ix := mustGet(t, c)
		if !ix.Generated.Equal(st.want) {
			t.Errorf("after the %s: generated %v, want %v", st.what, ix.Generated, st.want)
		}
		if f := fresh(); f.ETag != ix.ETag || !bytes.Equal(f.Body, ix.Body) {
			t.Errorf("after the %s: the kept index differs from one loaded afresh:\n%s\nfresh\n%s", st.what, ix.Body, f.Body)
		}
	}
}

func TestLazyLoading(t *testing.T) {
	c, l := setup(t, mkCV(t, nil, "a", "1.0.0", t0))
	// Refreshes before the first Get are no-ops: the load reads the store.
	c.Refresh(context.Background(), "r", "b", "1.0.0")
	c.Refresh(context.Background(), "r", "a", "1.0.0")
	if n := l.calls.Load(); n != 0 {
		t.Fatalf("loader called %d times before any Get", n)
	}
	hi := loadWithHelm(t, mustGet(t, c).Body)
	if hi.Entries["a"] == nil || hi.Entries["b"] != nil {
		t.Errorf("entries = %v; the store held only a", hi.Entries)
	}
	mustGet(t, c)
	if n := l.calls.Load(); n != 1 {
		t.Errorf("loader called %d times, want 1", n)
	}

	// Drop forgets the repository: the next Get reads the store again.
	l.set(mkCV(t, nil, "c", "1.0.0", t0))
	c.Drop("r")
	hi = loadWithHelm(t, mustGet(t, c).Body)
	if n := l.calls.Load(); n != 2 || hi.Entries["c"] == nil || hi.Entries["a"] != nil {
		t.Errorf("after Drop: %d loads, entries %v", n, hi.Entries)
	}
}

func TestLoadError(t *testing.T) {
	var calls atomic.Int32
	c := New(func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
		if calls.Add(1) == 1 {
			return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Repository not found.")
		}
		return nil, nil
	}, Options{})
	_, err := c.Get(context.Background(), "r")
	if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("error = %v, want ENOTFOUND kept", err)
	}
	// The failure is not cached.
	ix, err := c.Get(context.Background(), "r")
	if err != nil || ix == nil {
		t.Fatalf("second Get: %v", err)
	}
	if !bytes.Contains(ix.Body, []byte("contextPath: /helm")) {
		t.Errorf("default context path missing:\n%s", ix.Body)
	}
}

func TestPutDuringLoad(t *testing.T) {
	// A version committed while the store is being read: its Refresh waits
	// for the load, then applies, so the index never misses it.
	a := mkCV(t, nil, "a", "1.0.0", t0)
	b := mkCV(t, nil, "b", "1.0.0", t0)
	started, release := make(chan struct{}), make(chan struct{})
	c := New(func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
		close(started)
		<-release
		return []*chartctl.ChartVersion{a}, nil // read before b's commit
	}, Options{LoadVersion: func(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
		return b, nil // b is committed by now
	}})
	got := make(chan *Index)
	go func() {
		ix, err := c.Get(context.Background(), "r")
		if err != nil {
			t.Error(err)
		}
		got <- ix
	}()
	<-started
	putDone := make(chan struct{})
	go func() {
		c.Refresh(context.Background(), "r", b.Name, b.Version)
		close(putDone)
	}()
	close(release)
	<-got
	<-putDone
	hi := loadWithHelm(t, mustGet(t, c).Body)
	if hi.Entries["a"] == nil || hi.Entries["b"] == nil {
		t.Errorf("entries = %v, want a and b", hi.Entries)
	}
}

func TestConcurrentPutGet(t *testing.T) {
	c, l := setup(t)
	mustGet(t, c)
	var wg sync.WaitGroup
	final := make([][]*chartctl.ChartVersion, 4)
	for w := range 4 {
		wg.Go(func() {
			name := fmt.Sprintf("chart%d", w)
			for i := range 50 {
				cv := mkCV(t, nil, name, fmt.Sprintf("1.%d.0", i), t0)
				put(c, l, cv)
				final[w] = append(final[w], cv)
				if i%5 == 4 {
					del(c, l, name, fmt.Sprintf("1.%d.0", i-1))
				}
				if i%3 == 0 {
					if _, err := c.Get(context.Background(), "r"); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	ix := mustGet(t, c)
	var all []*chartctl.ChartVersion
	for _, f := range final {
		// Versions deleted right after being put went away.
		for _, cv := range f {
			keep := true
			for i := 4; i < 50; i += 5 {
				if cv.Version == fmt.Sprintf("1.%d.0", i-1) {
					keep = false
				}
			}
			if keep {
				all = append(all, cv)
			}
		}
	}
	if want := helmIndex(t, all, ix.Generated); !bytes.Equal(ix.Body, want) {
		t.Fatalf("after concurrent changes:\n%s\nwant\n%s", ix.Body, want)
	}
	for name, vs := range loadWithHelm(t, ix.Body).Entries {
		seen := map[string]bool{}
		for _, v := range vs {
			if seen[v.Version] {
				t.Errorf("duplicate entry %s %s", name, v.Version)
			}
			seen[v.Version] = true
		}
	}
}

func TestOrderingRandomised(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	versions := []string{"0.0.1", "0.1.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0-0", "2.0.0", "10.0.0"}
	var cvs []*chartctl.ChartVersion
	for _, v := range versions {
		cvs = append(cvs, mkCV(t, nil, "c", v, t0))
	}
	for range 5 {
		rng.Shuffle(len(cvs), func(i, j int) { cvs[i], cvs[j] = cvs[j], cvs[i] })
		c, l := setup(t, cvs[:len(cvs)/2]...)
		mustGet(t, c)
		for _, cv := range cvs[len(cvs)/2:] {
			put(c, l, cv)
		}
		var got []string
		for _, v := range loadWithHelm(t, mustGet(t, c).Body).Entries["c"] {
			got = append(got, v.Version)
		}
		want := slicesReversed(versions)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("order = %v\nwant %v", got, want)
		}
	}
}

func slicesReversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestYAMLKeyOrder(t *testing.T) {
	names := []string{"a", "b", "A", "B", "a1", "a10", "a9", "a01", "a-b", "a_b", "a.b", "1", "10", "9", "1.0", "0x", "00", "z9z", "z10z", "ab", "a-1", "web", "web-ui", "web2", "w"}
	m := map[string]int{}
	for _, n := range names {
		m[n] = 0
	}
	y, err := yamlv2.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var ms yamlv2.MapSlice
	if err := yamlv2.Unmarshal(y, &ms); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, it := range ms {
		want = append(want, fmt.Sprint(it.Key))
	}
	got := append([]string(nil), names...)
	sort.Slice(got, func(i, j int) bool { return yamlKeyLess(got[i], got[j]) })
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order = %v\nyaml  = %v", got, want)
	}
}

func TestGzip(t *testing.T) {
	c, _ := setup(t, mkCV(t, richMetadata(), "a", "1.0.0", t0))
	ix := mustGet(t, c)
	z := ix.Gzip()
	if &z[0] != &ix.Gzip()[0] {
		t.Error("Gzip computed twice")
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, ix.Body) {
		t.Error("gzip does not round-trip")
	}
}

func TestETag(t *testing.T) {
	c, _ := setup(t, mkCV(t, nil, "a", "1.0.0", t0))
	ix := mustGet(t, c)
	sum := sha256.Sum256(ix.Body)
	if ix.ETag != `"sha256-`+hex.EncodeToString(sum[:])+`"` {
		t.Errorf("ETag = %s", ix.ETag)
	}
	// A fresh cache over the same store (a restart) serves the same ETag.
	c2, _ := setup(t, mkCV(t, nil, "a", "1.0.0", t0))
	if ix2 := mustGet(t, c2); ix2.ETag != ix.ETag {
		t.Error("ETag differs across restarts")
	}
}

func TestMetadataFallback(t *testing.T) {
	cv := mkCV(t, nil, "a", "1.0.0", t0)
	cv.Metadata = nil
	cv.Description, cv.AppVersion, cv.Keywords = "desc", "2.0", []string{"k"}
	c, _ := setup(t, cv)
	hi := loadWithHelm(t, mustGet(t, c).Body)
	e := hi.Entries["a"]
	if len(e) != 1 || e[0].Description != "desc" || e[0].AppVersion != "2.0" || e[0].Keywords[0] != "k" || e[0].APIVersion != "v2" {
		t.Errorf("entry = %+v", e)
	}
}

func TestRepositoriesAreSeparate(t *testing.T) {
	c := New(func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
		return []*chartctl.ChartVersion{mkCV(t, nil, "chart-of-"+repo, "1.0.0", t0)}, nil
	}, Options{ContextPath: "/x"})
	for _, r := range []string{"one", "two"} {
		ix, err := c.Get(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		hi := loadWithHelm(t, ix.Body)
		if len(hi.Entries) != 1 || hi.Entries["chart-of-"+r] == nil || hi.ServerInfo["contextPath"] != "/x" {
			t.Errorf("%s: %+v", r, hi)
		}
	}
}

// populated returns a loaded cache over n versions of 10 charts.
func populated(tb testing.TB, n int) (*Cache, *staticLoader) {
	tb.Helper()
	cvs := make([]*chartctl.ChartVersion, 0, n)
	for i := range n {
		md := richMetadata()
		md.Dependencies = nil
		cvs = append(cvs, mkCV(tb, md, fmt.Sprintf("chart%d", i%10), fmt.Sprintf("1.%d.%d", i/100, i%100), t0))
	}
	c, l := setup(tb, cvs...)
	mustGet(tb, c)
	return c, l
}

func BenchmarkGet(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c, _ := populated(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Get(context.Background(), "r"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPut adds a new version to a 10,000-version repository (commit
// to the test store, Refresh): the cost is reading and rendering that one
// version, independent of the repository size.
func BenchmarkPut(b *testing.B) {
	c, l := populated(b, 10000)
	cvs := make([]*chartctl.ChartVersion, 1000)
	for i := range cvs {
		cvs[i] = mkCV(b, nil, "chart3", fmt.Sprintf("2.0.%d", i), t0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		cv := cvs[i%len(cvs)]
		if i%len(cvs) == 0 && i > 0 {
			// Start the round again from a repository without them.
			b.StopTimer()
			for _, d := range cvs {
				del(c, l, d.Name, d.Version)
			}
			b.StartTimer()
		}
		put(c, l, cv)
		i++
	}
}

// BenchmarkPutThenGet is the first Get after a change in a 10,000-version
// repository: one concatenation of stored fragments plus its hash.
func BenchmarkPutThenGet(b *testing.B) {
	c, l := populated(b, 10000)
	cv := mkCV(b, nil, "chart3", "2.0.0", t0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		put(c, l, cv)
		if _, err := c.Get(context.Background(), "r"); err != nil {
			b.Fatal(err)
		}
		del(c, l, cv.Name, cv.Version)
	}
}

// FuzzIndexMatchesHelm renders arbitrary metadata strings and compares the
// index with the one Helm writes.
func FuzzIndexMatchesHelm(f *testing.F) {
	f.Add("plain", "a\n\nb", "true")
	f.Add("  lead", "- x: y\n  z", "#c")
	f.Add("ü\t\"'", "|\n>", "null")
	f.Fuzz(func(t *testing.T, desc, annotation, keyword string) {
		md := &chart.Metadata{APIVersion: "v2", Description: desc, Keywords: []string{keyword}, Annotations: map[string]string{annotation: annotation}}
		if !utf8Valid(desc, annotation, keyword) {
			return
		}
		cv := mkCV(t, md, "c", "1.0.0", t0)
		c, _ := setup(t, cv)
		ix := mustGet(t, c)
		if want := helmIndex(t, []*chartctl.ChartVersion{cv}, ix.Generated); !bytes.Equal(ix.Body, want) {
			t.Fatalf("ours\n%s\nHelm's\n%s", ix.Body, want)
		}
	})
}

func utf8Valid(ss ...string) bool {
	for _, s := range ss {
		if strings.ToValidUTF8(s, "") != s {
			return false
		}
	}
	return true
}

func TestPutRendersOnlyItsVersion(t *testing.T) {
	c, l := populated(t, 200)
	frags := func() map[string]*byte {
		c.mu.Lock()
		r := c.repos["r"]
		c.mu.Unlock()
		r.mu.Lock()
		defer r.mu.Unlock()
		out := map[string]*byte{}
		for name, ce := range r.charts {
			for _, v := range ce.versions {
				out[name+" "+v.raw] = &v.frag[0]
			}
		}
		return out
	}
	before := frags()
	put(c, l, mkCV(t, nil, "chart3", "9.0.0", t0))
	del(c, l, "chart4", "1.0.4")
	mustGet(t, c)
	after := frags()
	if len(after) != len(before) {
		t.Fatalf("%d versions, want %d", len(after), len(before))
	}
	for k, p := range before {
		if k == "chart4 1.0.4" {
			continue
		}
		if after[k] != p {
			t.Errorf("%s was rendered again", k)
		}
	}
}

// BenchmarkFirstGet is the first request for a repository: loading its
// records and rendering every version once.
func BenchmarkFirstGet(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cvs := make([]*chartctl.ChartVersion, 0, n)
			for i := range n {
				cvs = append(cvs, mkCV(b, nil, fmt.Sprintf("chart%d", i%10), fmt.Sprintf("1.%d.%d", i/100, i%100), t0))
			}
			c, _ := setup(b, cvs...)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				c.Drop("r")
				mustGet(b, c)
			}
		})
	}
}

// The header values an Index carries match its bodies and are capped
// slices, so a server adding to a header never writes into them.
func TestIndexHeaderValues(t *testing.T) {
	c := New(func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
		return []*chartctl.ChartVersion{{Repository: repo, Name: "app", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64), CreatedAt: time.Unix(1, 0)}}, nil
	}, Options{})
	ix, err := c.Get(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []struct {
		name string
		v    []string
		want string
	}{
		{"ETag", ix.ETagHeader, ix.ETag},
		{"Content-Length", ix.LengthHeader, strconv.Itoa(len(ix.Body))},
		{"gzip Content-Length", ix.GzipLengthHeader(), strconv.Itoa(len(ix.Gzip()))},
	} {
		if len(h.v) != 1 || h.v[0] != h.want || cap(h.v) != 1 {
			t.Errorf("%s: %q (cap %d), want [%q] with cap 1", h.name, h.v, cap(h.v), h.want)
		}
	}
}

// BenchmarkFirstGetStored is the first index request after a restart as
// a server makes it: every version's YAML entry stored at upload, the
// index asked for as YAML, as JSON converted from the stored YAML entries
// (versions stored before JSON entries were kept) and as JSON from the
// JSON entries stored at upload (json-stored), at 10,000 and 100,000
// versions.
func BenchmarkFirstGetStored(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		cvs := make([]*chartctl.ChartVersion, 0, n)
		withJSON := make([]*chartctl.ChartVersion, 0, n)
		for i := range n {
			cv := mkCV(b, nil, fmt.Sprintf("chart%d", i%10), fmt.Sprintf("%d.%d.%d", i/10000, i/100%100, i%100), t0)
			cv.IndexEntry = RenderEntry(cv)
			cvs = append(cvs, cv)
			// json-stored: versions stored with their JSON entry
			// (issue #32); json: stored before, converted at load.
			j := *cv
			j.IndexEntryJSON = RenderEntryJSON(cv)
			withJSON = append(withJSON, &j)
		}
		for _, f := range []struct {
			name string
			f    Format
			cvs  []*chartctl.ChartVersion
		}{{"yaml", YAML, cvs}, {"json", JSON, cvs}, {"json-stored", JSON, withJSON}} {
			b.Run(fmt.Sprintf("%d/%s", n, f.name), func(b *testing.B) {
				c, _ := setup(b, f.cvs...)
				b.ReportAllocs()
				for b.Loop() {
					c.Drop("r")
					if _, err := c.View(context.Background(), "r", Query{Format: f.f}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
