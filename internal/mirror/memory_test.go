package mirror_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/testkit"
)

// bigIndex writes, to a file, an index of at least size bytes in Helm's
// shape (the fields `helm repo index` writes, JSON or YAML as Helm writes
// either), listing first the one real archive given and then versions
// whose archives the upstream does not have. It returns the file and how
// many versions it lists. The index stays out of this process's heap, as
// on an upstream elsewhere, so that the heap measured is the server's.
func bigIndex(t *testing.T, size int, asJSON bool, real []byte) (string, int) {
	t.Helper()
	sum := sha256.Sum256(real)
	path := filepath.Join(t.TempDir(), "index.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b := &countWriter{w: bufio.NewWriter(f)}
	if asJSON {
		b.WriteString(`{"apiVersion":"v1","entries":{`)
	} else {
		b.WriteString("apiVersion: v1\nentries:\n")
	}
	n := 0
	for c := 0; b.Len() < size; c++ {
		name := fmt.Sprintf("chart-%04d", c)
		if asJSON {
			if c > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(b, "%q:[", name)
		} else {
			fmt.Fprintf(b, "  %s:\n", name)
		}
		for v := range 100 {
			ver, digest, file := fmt.Sprintf("1.%d.%d", v/10, v%10), fmt.Sprintf("%064x", c*1000+v), fmt.Sprintf("%s-1.%d.%d.tgz", name, v/10, v%10)
			if c == 0 && v == 0 {
				ver, digest, file = "0.1.0", hex.EncodeToString(sum[:]), "real-0.1.0.tgz"
			}
			n++
			desc := "A chart generated for the memory bound of a mirror sync, with a description as long as real ones are."
			if asJSON {
				if v > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(b, `{"annotations":{"category":"Database"},"apiVersion":"v2","appVersion":"%[1]s","created":"2025-01-02T03:04:05.123456789Z","dependencies":[{"name":"common","repository":"oci://registry.example.com/charts","tags":["common"],"version":"2.x.x"}],"description":%[2]q,"digest":"%[3]s","home":"https://example.com/%[4]s","icon":"https://example.com/icon.png","keywords":["database","test"],"maintainers":[{"email":"a@example.com","name":"A"}],"name":"%[4]s","sources":["https://github.com/example/%[4]s"],"urls":["charts/%[5]s"],"version":"%[1]s"}`,
					ver, desc, digest, name, file)
			} else {
				fmt.Fprintf(b, "  - annotations:\n      category: Database\n    apiVersion: v2\n    appVersion: %[1]s\n    created: \"2025-01-02T03:04:05.123456789Z\"\n    dependencies:\n    - name: common\n      repository: oci://registry.example.com/charts\n      tags:\n      - common\n      version: 2.x.x\n    description: %[2]s\n    digest: %[3]s\n    home: https://example.com/%[4]s\n    icon: https://example.com/icon.png\n    keywords:\n    - database\n    - test\n    maintainers:\n    - email: a@example.com\n      name: A\n    name: %[4]s\n    sources:\n    - https://github.com/example/%[4]s\n    urls:\n    - charts/%[5]s\n    version: %[1]s\n",
					ver, desc, digest, name, file)
			}
		}
		if asJSON {
			b.WriteString("]")
		}
	}
	if asJSON {
		b.WriteString(`},"generated":"2026-01-01T00:00:00Z"}`)
	} else {
		b.WriteString("generated: \"2026-01-01T00:00:00Z\"\n")
	}
	if err := b.w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, n
}

// countWriter counts what it writes.
type countWriter struct {
	w *bufio.Writer
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

func (c *countWriter) WriteString(s string) { _, _ = c.Write([]byte(s)) }

func (c *countWriter) Len() int { return c.n }

// serveIndex serves the index file at /index.yaml and the archive real
// at /charts/real-0.1.0.tgz on 127.0.0.1; every other archive is a 404.
// With length, the index's answer says its Content-Length; without, it is
// chunked, its size known only by reading it.
func serveIndex(t *testing.T, index string, real []byte, length bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			f, err := os.Open(index)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer f.Close()
			if fi, err := f.Stat(); err == nil && length {
				w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
			}
			_, _ = io.Copy(w, f)
		case "/charts/real-0.1.0.tgz":
			_, _ = w.Write(real)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// peakHeap samples the heap in use until stop is closed, and then sends
// the highest figure seen.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return out
}

// TestMirrorSyncMemoryBound: a mirror sync of a 32 MiB JSON index, and of
// a YAML one (smaller, YAML being slower to decode), served by a real
// upstream over HTTP to the real server, grows the server's heap by less
// than 4 times the index's size (CONTRACT §18 decision 15). Before, the
// index was read whole and decoded as a YAML tree: 28 times, so a 32 MiB
// index took about 900 MiB. The sync lists every version: it copies the
// one real archive and reports the others missing.
func TestMirrorSyncMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and syncs a 32 MiB index")
	}
	real := testkit.MakeChart(t, testkit.Chart{Name: "chart-0000", Version: "0.1.0"})
	for _, tc := range []struct {
		name   string
		size   int
		asJSON bool
	}{
		{"json", 32 << 20, true},
		{"yaml", 12 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, envOptions{})
			index, n := bigIndex(t, tc.size, tc.asJSON, real)
			fi, err := os.Stat(index)
			if err != nil {
				t.Fatal(err)
			}
			size := fi.Size()
			up := serveIndex(t, index, real, false)
			e.createMirror(t, "big", map[string]string{"url": up})

			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := make(chan struct{})
			peak := peakHeap(stop)
			res, syncErr := e.Syncer.Sync(t.Context(), "big")
			close(stop)
			growth := int64(<-peak) - int64(before.HeapInuse)
			t.Logf("%s index of %d bytes, %d versions: heap grew by %d bytes (%.2f times the index)", tc.name, size, n, growth, float64(growth)/float64(size))

			if res == nil || len(res.Added) != 1 || res.Added[0] != "chart-0000 0.1.0" || len(res.Failed) != n-1 {
				t.Fatalf("the sync did not go through the index: %v (%+v, of %d)", syncErr, res, n)
			}
			if m := e.repo(t, "big").Mirror; m.Status != "error" || !strings.Contains(m.Error, fmt.Sprintf("%d of %d new versions could not be copied", n-1, n)) {
				t.Fatalf("status after the sync: %+v", m)
			}
			if growth > 4*size {
				t.Fatalf("the sync of a %d MiB index grew the heap by %d MiB, more than 4 times the index", size>>20, growth>>20)
			}
		})
	}
}

// TestMirrorIndexSizeLimit: an index larger than --upstream-index-max-size
// fails the sync, whether its answer announces its length or not, JSON or
// YAML, with an error in the mirror's status naming the flag; nothing is
// copied.
func TestMirrorIndexSizeLimit(t *testing.T) {
	real := testkit.MakeChart(t, testkit.Chart{Name: "chart-0000", Version: "0.1.0"})
	index, _ := bigIndex(t, 2<<20, true, real)
	yamlIndex, _ := bigIndex(t, 2<<20, false, real)
	for _, tc := range []struct {
		name, index string
		length      bool
	}{{"json", index, true}, {"json", index, false}, {"yaml", yamlIndex, false}} {
		index, length := tc.index, tc.length
		t.Run(fmt.Sprintf("%s content-length=%v", tc.name, length), func(t *testing.T) {
			e := setup(t, envOptions{maxIndexSize: 1 << 20})
			up := serveIndex(t, index, real, length)
			e.createMirror(t, "big", map[string]string{"url": up})
			_, err := e.Syncer.Sync(t.Context(), "big")
			m := e.repo(t, "big").Mirror
			if err == nil || m.Status != "error" || !strings.Contains(m.Error, "is larger than 1 MiB, the limit set by the server's "+mirror.FlagUpstreamIndexMaxSize) {
				t.Fatalf("sync of a 2 MiB index over a 1 MiB limit: %v, status %+v", err, m)
			}
			if v := e.versions(t, "big"); len(v) != 0 {
				t.Fatalf("copied from a refused index: %v", v)
			}
		})
	}
	// The same index under the limit syncs.
	e := setup(t, envOptions{maxIndexSize: 3 << 20})
	e.createMirror(t, "big", map[string]string{"url": serveIndex(t, index, real, true)})
	if res, _ := e.Syncer.Sync(t.Context(), "big"); res == nil || len(res.Added) != 1 {
		t.Fatalf("a 2 MiB index under a 3 MiB limit: %+v", res)
	}
}
