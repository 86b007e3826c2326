package serve_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestProxyReplicas runs two replicas of the real binary on one
// PostgreSQL database and one S3 bucket serving the same proxy
// repository (issue #31): 20 concurrent pulls of a chart never fetched,
// spread over both, make one upstream archive request (the fill's lease
// across replicas); both then serve the same bytes and the same
// index.yaml ETag; and a failing version's negative cache holds on both
// (each replica asks the upstream once, then answers from memory).
func TestProxyReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	sum := sha256.Sum256(archive)
	index := fmt.Sprintf(`apiVersion: v1
entries:
  web:
  - apiVersion: v2
    name: web
    version: 1.0.0
    urls: [charts/web-1.0.0.tgz]
    digest: %s
    created: "2026-01-02T03:04:05Z"
  gone:
  - apiVersion: v2
    name: gone
    version: 1.0.0
    urls: [charts/gone-1.0.0.tgz]
    created: "2026-01-02T03:04:05Z"
`, hex.EncodeToString(sum[:]))
	var (
		mu       sync.Mutex
		requests = map[string]int{}
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/index.yaml":
			w.Header().Set("ETag", `"v1"`)
			_, _ = w.Write([]byte(index))
		case "/charts/web-1.0.0.tgz":
			// Slow enough that the pulls overlap the fill (not an
			// assertion on time: the count below is what is checked).
			time.Sleep(300 * time.Millisecond)
			_, _ = w.Write(archive)
		case "/charts/web-1.0.0.tgz.prov":
			// Unsigned: the fill asks for a provenance file with the archive.
			http.NotFound(w, r)
		default:
			http.Error(w, "broken", http.StatusInternalServerError)
		}
	}))
	defer up.Close()
	count := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return requests[path]
	}
	host := strings.TrimPrefix(up.URL, "http://")

	bin := mustBinary(t)
	rs := startSharedReplicas(t, bin, "--allow-private-upstreams=127.0.0.1/32", "--plain-http-upstreams", host)
	body := fmt.Sprintf(`{"name":"px","visibility":"public","proxy":{"url":%q}}`, up.URL)
	if r, b, err := do(t, "POST", rs.url(0)+"/v1/repositories", rs.key, strings.NewReader(body), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create proxy: %v %s", err, b)
	}

	const n = 20
	bodies := make([][]byte, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, b, err := do(t, "GET", rs.url(i)+"/helm/px/charts/web-1.0.0.tgz", rs.key, nil, "")
			if err != nil {
				t.Errorf("pull %d: %v", i, err)
				return
			}
			codes[i], bodies[i] = r.StatusCode, b
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || !bytes.Equal(bodies[i], archive) {
			t.Fatalf("pull %d from replica %d: %d %.200s", i, i%2, codes[i], bodies[i])
		}
	}
	if got := count("/charts/web-1.0.0.tgz"); got != 1 {
		t.Errorf("the upstream saw %d archive requests for %d pulls over two replicas, want 1", got, n)
	}

	// The same bytes and the same index on both (the index notification
	// reaches the other replica eventually: wait for it, bounded).
	etags := make([]string, 2)
	for start := time.Now(); ; {
		for i := range 2 {
			r, b, err := do(t, "GET", rs.url(i)+"/helm/px/index.yaml", rs.key, nil, "")
			if err != nil || r.StatusCode != 200 || !strings.Contains(string(b), "charts/web-1.0.0.tgz") {
				t.Fatalf("index on replica %d: %v %s", i, err, b)
			}
			etags[i] = r.Header.Get("ETag")
		}
		if etags[0] != "" && etags[0] == etags[1] {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("index ETags differ: %q and %q", etags[0], etags[1])
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range 2 {
		r, b, err := do(t, "GET", rs.url(i)+"/v1/repositories/px/charts/web/1.0.0/archive", rs.key, nil, "")
		if err != nil || r.StatusCode != 200 || !bytes.Equal(b, archive) {
			t.Fatalf("/v1 archive on replica %d: %v %d", i, err, len(b))
		}
	}

	// A failing version: 502 naming the upstream on both replicas, each
	// asking the upstream once; asked again, both answer from their
	// negative cache.
	for round := range 2 {
		for i := range 2 {
			r, b, err := do(t, "GET", rs.url(i)+"/helm/px/charts/gone-1.0.0.tgz", rs.key, nil, "")
			if err != nil || r.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), host) {
				t.Fatalf("round %d, replica %d: failing version: %v %s", round, i, err, b)
			}
		}
	}
	if got := count("/charts/gone-1.0.0.tgz"); got < 1 || got > 2 {
		t.Errorf("the upstream saw %d requests for the failing version over 4 pulls on two replicas, want one per replica at most", got)
	}
}
