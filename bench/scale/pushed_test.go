package scale_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/bench/corpus"
	"github.com/chartctl/chartctl/bench/harness"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

// pushedN is the size of BenchmarkPushedRepository's repository
// (CHARTCTL_BENCH_PUSHED_N, default 100,000).
func pushedN(b *testing.B) int {
	return envInt(b, "CHARTCTL_BENCH_PUSHED_N", 100_000, 100)
}

// pushedPushers is how many uploads BenchmarkPushedRepository keeps in
// flight (CHARTCTL_BENCH_PUSHED_PUSHERS, default 4: a few CI pipelines).
func pushedPushers(b *testing.B) int {
	return envInt(b, "CHARTCTL_BENCH_PUSHED_PUSHERS", 4, 1)
}

func envInt(b *testing.B, name string, def, least int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		b.Fatalf("%s=%q: want a number ≥ %d", name, v, least)
	}
	return n
}

// pushedModes are the modes BenchmarkPushedRepository runs, in order
// (CHARTCTL_BENCH_PUSHED_MODES, comma-separated; default both stores;
// tlsMode, bolt + files over HTTPS, only when named).
func pushedModes(b *testing.B) []string {
	v := os.Getenv("CHARTCTL_BENCH_PUSHED_MODES")
	if v == "" {
		return modes
	}
	known := append(slices.Clone(modes), tlsMode)
	var out []string
	for _, m := range strings.Split(v, ",") {
		if !slices.Contains(known, m) {
			b.Fatalf("CHARTCTL_BENCH_PUSHED_MODES: unknown mode %q (want %s)", m, strings.Join(known, ", "))
		}
		out = append(out, m)
	}
	return out
}

// BenchmarkPushedRepository is issue #32's server side at 100,000
// versions, everything through the built binary's HTTP API: it starts one
// `chartctl serve` (bolt + files, or PostgreSQL + S3), pushes
// CHARTCTL_BENCH_PUSHED_N chart versions of corpus.Spread (2,000 charts
// with a real repository's skew) into one repository with a few pushers,
// then measures, on that repository:
//
//   - first10-ms, last10-ms, growth: the mean upload time of the first
//     and the last 10 % of the pushes, and their ratio (target ≤ 1.5);
//   - pushes/s over the whole fill;
//   - rss-MiB: the server's resident memory after the fill (bolt ≤ 400),
//     and rss-file-MiB the part of it that is mapped files (bolt's);
//   - list-p50-ms: a /v1 chart list page of 20 (≤ 5 ms);
//   - search-p50-ms: /v1/search over the corpus' keywords (≤ 20 ms);
//   - startup-ms: SIGTERM, start again, until /readyz answers 200, the
//     median of 3 (< 1 s);
//   - first-index-ms: the first index.yaml after each restart (≤ 1 s),
//     asking for gzip as Helm does, to its last byte (getGzip), the
//     median of 3; first-index-cold-ms the first of them, the only
//     one whose repository changed since the previous start (the fill),
//     answered from the snapshot the index keeper wrote when the changes
//     paused or the server stopped;
//   - rss-index-MiB: resident memory after those index loads;
//   - first-index-load-ms: the first index.yaml after a restart with the
//     index cache directory emptied, so loaded from the store: what a
//     start without snapshots (a new build, a lost disk) costs.
//
// CHARTCTL_BENCH_PUSHED_MODES=bolt+files+tls runs the same on bolt +
// files served over HTTPS (--tls-cert, a throwaway CA's certificate the
// client trusts): issue #32 reads its targets over TLS within 2×.
//
// One iteration is the whole run: use -benchtime 1x.
func BenchmarkPushedRepository(b *testing.B) {
	n, pushersN := pushedN(b), pushedPushers(b)
	genStart := time.Now()
	charts, err := corpus.Spread(n)
	if err != nil {
		b.Fatal(err)
	}
	ups := uploadsOf(b, charts)
	terms := pushedTerms(charts)
	b.Logf("generated %d chart versions in %v", n, time.Since(genStart).Round(time.Millisecond))
	for _, mode := range pushedModes(b) {
		b.Run(mode, func(b *testing.B) {
			nd, data, key := startPushed(b, mode)
			defer nd.stop()
			const repo = "big"
			code, body, err := do("POST", nd.url+"/v1/repositories", key, "application/json", []byte(`{"name":"`+repo+`","visibility":"public"}`))
			if err != nil || code != http.StatusOK {
				b.Fatalf("create %s: %d %s %v", repo, code, body, err)
			}
			d := &deployment{key: key}

			// Fill, recording each upload's time by its place in the
			// push order.
			times := make([]time.Duration, n)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Bool
			start := time.Now()
			progress := time.NewTicker(time.Minute)
			filled := make(chan struct{})
			go func() {
				for {
					select {
					case <-progress.C:
						// Straight to stderr: a benchmark's log shows only at its end.
						fmt.Fprintf(os.Stderr, "%s: %d of %d pushed after %v\n", mode, min(int(next.Load()), n), n, time.Since(start).Round(time.Second))
					case <-filled:
						return
					}
				}
			}()
			for range pushersN {
				wg.Go(func() {
					for i := int(next.Add(1)) - 1; i < n && !failed.Load(); i = int(next.Add(1)) - 1 {
						took, err := d.push(nd.url, repo, ups[i])
						if err != nil {
							failed.Store(true)
							b.Errorf("push %d (%s): %v", i, charts[i].Filename(), err)
							return
						}
						times[i] = took
					}
				})
			}
			wg.Wait()
			fill := time.Since(start)
			progress.Stop()
			close(filled)
			if failed.Load() {
				b.FailNow()
			}
			tenth := max(1, n/10)
			first, last := meanMS(times[:tenth]), meanMS(times[n-tenth:])
			rss, rssFile := rssMiB(b, nd), statusMiB(b, nd, "RssFile")

			listP50 := p50Of(b, 200, func(i int) string {
				// Pages spread over the whole list, first to last.
				page := 1 + (i*7919)%max(1, n/20)
				return fmt.Sprintf("%s/v1/repositories/%s/charts?page=%d&limit=20", nd.url, repo, page)
			}, key)
			searchP50 := p50Of(b, 200, func(i int) string {
				return nd.url + "/v1/search?" + url.Values{"q": {terms[i%len(terms)]}}.Encode()
			}, key)

			var startups, firstIndex []time.Duration
			for range 3 {
				nd.stop()
				t0 := time.Now()
				nd.start(b)
				startups = append(startups, time.Since(t0))
				t0 = time.Now()
				code, body, err := getGzip(nd.url+"/helm/"+repo+"/index.yaml", key)
				firstIndex = append(firstIndex, time.Since(t0))
				if err == nil && code == http.StatusOK {
					body, err = gunzipAll(body)
				}
				if err != nil || code != http.StatusOK || !bytes.Contains(body, []byte(charts[n-1].Version)) {
					b.Fatalf("index.yaml after restart: %d %v (%d bytes)", code, err, len(body))
				}
			}
			b.ReportMetric(float64(n)/fill.Seconds(), "pushes/s")
			b.ReportMetric(first, "first10-ms")
			b.ReportMetric(last, "last10-ms")
			b.ReportMetric(last/first, "growth")
			b.ReportMetric(rss, "rss-MiB")
			b.ReportMetric(rssFile, "rss-file-MiB")
			b.ReportMetric(listP50, "list-p50-ms")
			b.ReportMetric(searchP50, "search-p50-ms")
			b.ReportMetric(percentile(startups, 0.5), "startup-ms")
			b.ReportMetric(percentile(firstIndex, 0.5), "first-index-ms")
			b.ReportMetric(float64(firstIndex[0].Microseconds())/1000, "first-index-cold-ms")
			b.ReportMetric(rssMiB(b, nd), "rss-index-MiB")

			nd.stop()
			if err := os.RemoveAll(filepath.Join(data, "index-cache")); err != nil {
				b.Fatal(err)
			}
			nd.start(b)
			t0 := time.Now()
			code, body, err = getGzip(nd.url+"/helm/"+repo+"/index.yaml", key)
			loaded := time.Since(t0)
			if err != nil || code != http.StatusOK {
				b.Fatalf("index.yaml after a restart without the index cache: %d %v (%d bytes)", code, err, len(body))
			}
			b.ReportMetric(float64(loaded.Microseconds())/1000, "first-index-load-ms")
		})
	}
}

// getGzip GETs url asking for gzip, as Helm does, and returns the
// compressed body: the time it takes is the server's answer to its last
// byte, not the client's decompression (about as long again for an 81 MB
// index on this machine), which gunzipAll does after.
func getGzip(url, key string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	// Set by hand, so the transport leaves the body compressed.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err == nil && resp.Header.Get("Content-Encoding") != "gzip" {
		err = fmt.Errorf("index.yaml came without gzip (Content-Encoding %q)", resp.Header.Get("Content-Encoding"))
	}
	return resp.StatusCode, out, err
}

// gunzipAll decompresses a gzip body.
func gunzipAll(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// startPushed starts a server of mode on a new data directory, and
// returns it, the directory and an admin key.
func startPushed(b *testing.B, mode string) (*node, string, string) {
	b.Helper()
	data := tempDir(b)
	args := []string{"--data", data}
	switch mode {
	case tlsMode:
		args = append(args, "--tls-cert", benchTLS.CertFile, "--tls-key", benchTLS.KeyFile)
	case pgMode:
		keyFile := filepath.Join(data, "shared-secrets.key")
		if err := os.WriteFile(keyFile, bytes.Repeat([]byte("k"), 32), 0o600); err != nil {
			b.Fatal(err)
		}
		args = append(args, "--database", pgtest.Shared(b).NewDatabase(b),
			"--blob-store", s3test.Shared(b).NewBucket(b), "--secrets-key-file", keyFile)
	}
	nd := startNode(b, args...)
	key := adminKey(b, data)
	return nd, data, key
}

// p50Of sends count GETs to urlOf(i), one after another, and returns the
// median time in milliseconds.
func p50Of(b *testing.B, count int, urlOf func(int) string, key string) float64 {
	b.Helper()
	times := make([]time.Duration, 0, count)
	for i := range count {
		u := urlOf(i)
		t0 := time.Now()
		code, body, err := do("GET", u, key, "", nil)
		times = append(times, time.Since(t0))
		if err != nil || code != http.StatusOK {
			b.Fatalf("GET %s: %d %v %.200s", u, code, err, body)
		}
	}
	return percentile(times, 0.5)
}

// meanMS is the mean of ds in milliseconds.
func meanMS(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum.Microseconds()) / 1000 / float64(len(ds))
}

// rssMiB reads the server process's resident set from /proc.
func rssMiB(b *testing.B, nd *node) float64 {
	b.Helper()
	return statusMiB(b, nd, "VmRSS")
}

// statusMiB reads one memory field of /proc/PID/status of the server
// (VmRSS; RssFile, the part that is mapped files: bolt's file).
func statusMiB(b *testing.B, nd *node, field string) float64 {
	b.Helper()
	n, err := harness.ProcStatus(nd.cmd.Process.Pid, field)
	if err != nil {
		b.Fatalf("read the server's %s: %v", field, err)
	}
	return float64(n) / (1 << 20)
}

// pushedTerms are the search queries: the corpus' keywords and chart
// names, in a fixed order.
func pushedTerms(charts []corpus.Chart) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range charts {
		for _, t := range append([]string{c.Name}, c.Keywords...) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		if len(out) >= 64 {
			break
		}
	}
	return out
}
