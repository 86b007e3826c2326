package registry_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

// benchGet fetches path and discards the body, failing on another status.
func benchGet(b *testing.B, c *http.Client, url, key string) {
	req, _ := http.NewRequest("GET", url, nil)
	req.SetBasicAuth("bench", key)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
}

// uploadWeb uploads versions 1.0.0 to 1.0.<n-1> of chart web to repo over
// /v1.
func uploadWeb(b *testing.B, e *env, repo string, n int) {
	for i := 0; i < n; i++ {
		a := testkit.MakeChart(b, testkit.Chart{Name: "web", Version: fmt.Sprintf("1.0.%d", i)})
		if r := e.Upload(b, repo, e.AdminKey, a, ""); r.StatusCode != 200 && r.StatusCode != 201 {
			b.Fatalf("upload: %d", r.StatusCode)
		}
	}
}

// BenchmarkChartPull compares pulling one chart version (of a chart with
// 200 versions, uploaded over /v1) over OCI — the manifest by tag, then the
// chart layer, as `helm pull oci://` does — with the classic download of
// its archive, on the same server.
func BenchmarkChartPull(b *testing.B) {
	e := setup(b)
	mustRepoIn(b, e, "bench", "private")
	uploadWeb(b, e, "bench", 200)
	layer := e.do(b, "GET", "/v2/bench/web/manifests/1.0.100", e.AdminKey, nil)
	if layer.StatusCode != 200 {
		b.Fatalf("manifest: %d", layer.StatusCode)
	}
	var m struct {
		Layers []struct{ Digest string }
	}
	layer.JSON(b, &m)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Run("classic", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			benchGet(b, c, e.URL+"/helm/bench/charts/web-1.0.100.tgz", e.AdminKey)
		}
	})
	b.Run("oci-layer", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			benchGet(b, c, e.URL+"/v2/bench/web/blobs/"+m.Layers[0].Digest, e.AdminKey)
		}
	})
	b.Run("oci", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			benchGet(b, c, e.URL+"/v2/bench/web/manifests/1.0.100", e.AdminKey)
			benchGet(b, c, e.URL+"/v2/bench/web/blobs/"+m.Layers[0].Digest, e.AdminKey)
		}
	})
	// By chart size: each iteration pulls one version both ways in turn
	// (under the same load) and reports the OCI pull's rate as a fraction
	// of the classic download's. Two requests cost about twice one where
	// the requests dominate; the bytes dominate in large charts.
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		name := fmt.Sprintf("sized%d", size>>10)
		a := testkit.MakeChart(b, testkit.Chart{Name: name, Version: "1.0.0", Files: map[string]string{"files/data.txt": noise(size)}})
		if r := e.Upload(b, "bench", e.AdminKey, a, ""); r.StatusCode != 200 && r.StatusCode != 201 {
			b.Fatalf("upload: %d", r.StatusCode)
		}
		r := e.do(b, "GET", "/v2/bench/"+name+"/manifests/1.0.0", e.AdminKey, nil)
		var sm struct {
			Layers []struct{ Digest string }
		}
		r.JSON(b, &sm)
		b.Run(fmt.Sprintf("interleaved-%dKiB", size>>10), func(b *testing.B) {
			var classic, oci time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				benchGet(b, c, e.URL+"/helm/bench/charts/"+name+"-1.0.0.tgz", e.AdminKey)
				mid := time.Now()
				benchGet(b, c, e.URL+"/v2/bench/"+name+"/manifests/1.0.0", e.AdminKey)
				benchGet(b, c, e.URL+"/v2/bench/"+name+"/blobs/"+sm.Layers[0].Digest, e.AdminKey)
				classic, oci = classic+mid.Sub(start), oci+time.Since(mid)
			}
			b.ReportMetric(float64(len(a))/1024, "archive-KiB")
			b.ReportMetric(float64(classic)/float64(oci), "oci-rate/classic")
		})
	}
}

// noise returns text that does not compress below n bytes (base64 of n
// random bytes: gzip takes its 4n/3 characters back to about n): the
// payload of a chart archive of about n bytes.
func noise(n int) string {
	raw := make([]byte, n)
	_, _ = rand.Read(raw)
	return base64.RawStdEncoding.EncodeToString(raw)
}

// BenchmarkChartPush compares storing a new chart version over OCI, with
// the requests Helm sends (oci-helm) and with the fewest a client can send
// (oci), with a /v1 multipart upload, on the same server; interleaved
// reports the ratio of Helm's push to /v1's under one load.
func BenchmarkChartPush(b *testing.B) {
	e := setup(b)
	mustRepoIn(b, e, "bench", "private")
	// charts makes b.N versions of a chart new to the server (a run of a
	// sub-benchmark, -count repeats included, pushes new versions, never
	// ones stored by an earlier run) and returns its name.
	runs := 0
	charts := func(b *testing.B, prefix string) (string, [][]byte) {
		runs++
		name := fmt.Sprintf("%s%d", prefix, runs)
		out := make([][]byte, b.N)
		for i := range out {
			out[i] = testkit.MakeChart(b, testkit.Chart{Name: name, Version: fmt.Sprintf("1.0.%d", i)})
		}
		return name, out
	}
	b.Run("v1", func(b *testing.B) {
		_, archives := charts(b, "v1chart")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if r := e.Upload(b, "bench", e.AdminKey, archives[i], ""); r.StatusCode != 200 && r.StatusCode != 201 {
				b.Fatalf("upload: %d", r.StatusCode)
			}
		}
	})
	pushOCI := func(b *testing.B, chart string, archive []byte, version string) {
		m := chartManifest(b, e, "bench/"+chart, archive, nil)
		if r := e.do(b, "PUT", "/v2/bench/"+chart+"/manifests/"+version, e.AdminKey, m, "Content-Type", "application/vnd.oci.image.manifest.v1+json"); r.StatusCode != 201 {
			b.Fatalf("manifest: %d %s", r.StatusCode, r.Body)
		}
	}
	// What Helm 4 and Helm 3 send (testkit.PushLikeHelm). The config is
	// the chart's metadata, so it differs from one version to the next.
	// (Each `helm push` process also exchanges its credentials for a token
	// first; the benchmark, one client, sends them with every request.)
	pushHelm := func(b *testing.B, chart string, archive []byte, version string) {
		c, err := testkit.NewOCIChart(chart, version, archive)
		if err == nil {
			err = testkit.PushLikeHelm(http.DefaultClient, e.URL, "bench", "anyone", e.AdminKey, c)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("oci-helm", func(b *testing.B) {
		name, archives := charts(b, "helmchart")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pushHelm(b, name, archives[i], fmt.Sprintf("1.0.%d", i))
		}
	})
	// The fewest requests a client can send: each blob in one POST.
	b.Run("oci", func(b *testing.B) {
		name, archives := charts(b, "ocichart")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pushOCI(b, name, archives[i], fmt.Sprintf("1.0.%d", i))
		}
	})
	// Both protocols in turn, each version pushed once over each: the
	// ratio of their times, measured under the same disk and CPU load
	// (this machine's fsync latency drifts between two runs far more
	// than the protocols differ).
	// The OCI push is Helm's (pushHelm).
	b.Run("interleaved", func(b *testing.B) {
		_, v1s := charts(b, "pairv1")
		ociName, ocis := charts(b, "pairoci")
		var tv1, toci time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if r := e.Upload(b, "bench", e.AdminKey, v1s[i], ""); r.StatusCode != 200 && r.StatusCode != 201 {
				b.Fatalf("upload: %d", r.StatusCode)
			}
			mid := time.Now()
			pushHelm(b, ociName, ocis[i], fmt.Sprintf("1.0.%d", i))
			tv1, toci = tv1+mid.Sub(start), toci+time.Since(mid)
		}
		b.ReportMetric(float64(tv1.Microseconds())/float64(b.N), "v1-µs/push")
		b.ReportMetric(float64(toci.Microseconds())/float64(b.N), "oci-µs/push")
		b.ReportMetric(float64(toci)/float64(tv1), "oci/v1")
	})
}

// patternReader yields n bytes of a repeating pattern without holding them.
type patternReader struct{ n int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	for i := range b {
		b[i] = byte(i * 7)
	}
	p.n -= int64(len(b))
	return len(b), nil
}

// BenchmarkLargeBlob pushes a 256 MiB blob in 16 MiB chunks and pulls it
// back, reporting the peak heap in use, sampled every 5 ms throughout: it
// stays flat (streams, no buffering of chunks or blobs).
// CHARTCTL_BENCH_BLOB_MIB sets another size (the 1 GiB: 1024).
func BenchmarkLargeBlob(b *testing.B) {
	const chunk = 16 << 20
	size := int64(256 << 20)
	if v := os.Getenv("CHARTCTL_BENCH_BLOB_MIB"); v != "" {
		mib, err := strconv.Atoi(v)
		if err != nil || mib < 16 || mib%16 != 0 {
			b.Fatalf("CHARTCTL_BENCH_BLOB_MIB=%q: want a multiple of 16", v)
		}
		size = int64(mib) << 20
	}
	e := setup(b)
	mustRepoIn(b, e, "big", "private")
	c := &http.Client{}
	var (
		mu   sync.Mutex
		peak uint64
	)
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		mu.Lock()
		peak = max(peak, ms.HeapInuse)
		mu.Unlock()
	}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		r := e.do(b, "POST", "/v2/big/image/blobs/uploads/", e.AdminKey, nil)
		loc := r.Header.Get("Location")
		h := sha256.New()
		for off := int64(0); off < size; off += chunk {
			body := io.TeeReader(&patternReader{n: chunk}, h)
			req, _ := http.NewRequest("PATCH", e.URL+loc, body)
			req.ContentLength = chunk
			req.Header.Set("Content-Range", fmt.Sprintf("%d-%d", off, off+chunk-1))
			req.SetBasicAuth("b", e.AdminKey)
			resp, err := c.Do(req)
			if err != nil || resp.StatusCode != 202 {
				b.Fatalf("chunk: %v %v", err, resp)
			}
			resp.Body.Close()
			loc = resp.Header.Get("Location")
			sample()
		}
		d := "sha256:" + hex.EncodeToString(h.Sum(nil))
		if r := e.do(b, "PUT", loc+"?digest="+d, e.AdminKey, nil); r.StatusCode != 201 {
			b.Fatalf("complete: %d %s", r.StatusCode, r.Body)
		}
		sample()
		req, _ := http.NewRequest("GET", e.URL+"/v2/big/image/blobs/"+d, nil)
		req.SetBasicAuth("b", e.AdminKey)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sample()
		if n != size {
			b.Fatalf("pulled %d bytes", n)
		}
	}
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(1<<20), "blob-MiB")
}

// discardWriter is a ResponseWriter that keeps nothing but the status, so
// a benchmark counts the server's allocations, not a recorder's.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}

// BenchmarkOCIRead is an anonymous pull of a public chart (uploaded over
// /v1, so its manifest is derived) through the whole router, in process:
// the manifest by tag and the chart layer, as `helm pull oci://` asks for
// them. It reports allocations per request.
func BenchmarkOCIRead(b *testing.B) {
	e := setup(b)
	mustRepoIn(b, e, "bench", "public")
	a := testkit.MakeChart(b, testkit.Chart{Name: "web", Version: "1.0.0"})
	if r := e.Upload(b, "bench", e.AdminKey, a, ""); r.StatusCode != 200 {
		b.Fatalf("upload: %d", r.StatusCode)
	}
	sum := sha256.Sum256(a)
	h := e.Handler()
	for _, c := range []struct{ name, path string }{
		{"manifest", "/v2/bench/web/manifests/1.0.0"},
		{"blob", "/v2/bench/web/blobs/sha256:" + hex.EncodeToString(sum[:])},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			w := &discardWriter{h: http.Header{}}
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("%s: %d", c.path, w.status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clear(w.h)
				w.status = 0
				h.ServeHTTP(w, req)
			}
			b.StopTimer()
			if w.status != http.StatusOK {
				b.Fatalf("%s: %d", c.path, w.status)
			}
		})
	}
}

// BenchmarkHelmPull measures what a Helm user waits for: one `helm pull`
// process of a chart version, over the classic repository (its index.yaml
// cached by `helm repo add`, as after `helm repo update`) and over OCI,
// in turn, from a public repository of 200 versions. It needs the real
// Helm 4 (CHARTCTL_HELM4) and skips without it.
func BenchmarkHelmPull(b *testing.B) {
	helms := testkit.Helms(b)
	base, ok := helms["helm4"]
	if !ok {
		b.Skip("CHARTCTL_HELM4 is not set")
	}
	e := setup(b)
	mustRepoIn(b, e, "pub", "public")
	uploadWeb(b, e, "pub", 200)
	h := base.Fresh(b)
	h.Must("repo", "add", "pub", e.URL+"/helm/pub")
	host := strings.TrimPrefix(e.URL, "http://")
	dir := b.TempDir()
	var tc, to time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		h.Must("pull", "pub/web", "--version", "1.0.100", "-d", dir)
		mid := time.Now()
		h.Must("pull", "oci://"+host+"/pub/web", "--version", "1.0.100", "--plain-http", "-d", dir)
		tc, to = tc+mid.Sub(start), to+time.Since(mid)
	}
	b.ReportMetric(float64(tc.Microseconds())/1000/float64(b.N), "classic-ms/pull")
	b.ReportMetric(float64(to.Microseconds())/1000/float64(b.N), "oci-ms/pull")
	b.ReportMetric(float64(tc)/float64(to), "oci-rate/classic-rate")
}
