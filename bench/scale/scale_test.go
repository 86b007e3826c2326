package scale_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/bench/corpus"
	"github.com/chartctl/chartctl/bench/harness"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopAll()
	_ = os.RemoveAll(filepath.Dir(benchTLS.CertFile))
	pgtest.StopShared()
	s3test.StopShared()
	os.Exit(code)
}

// The two modes compared; BenchmarkPushedRepository also runs tlsMode,
// bolt + files served over HTTPS, when asked to.
const (
	boltMode = "bolt+files"
	pgMode   = "postgres+s3"
	tlsMode  = "bolt+files+tls"
)

var modes = []string{boltMode, pgMode}

// pushers is how many CI pipelines push at once in BenchmarkPushers.
const pushers = 16

// benchTLS is the certificate servers of tlsMode present; client trusts
// it.
var benchTLS = func() *harness.TLS {
	dir, err := os.MkdirTemp("", "chartctl-bench-tls-")
	if err == nil {
		var t *harness.TLS
		if t, err = harness.NewTLS(dir); err == nil {
			return t
		}
	}
	panic("bench TLS certificate: " + err.Error())
}()

var client = benchTLS.Trust(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute})

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// binary builds chartctl from this module once per run, or returns
// CHARTCTL_BENCH_BINARY when set (a binary built beforehand, so a long run
// measures a fixed build while the tree changes).
func binary(b *testing.B) string {
	b.Helper()
	build.once.Do(func() {
		if p := os.Getenv("CHARTCTL_BENCH_BINARY"); p != "" {
			build.path = p
			return
		}
		build.dir, build.err = os.MkdirTemp("", "chartctl-bench-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "chartctl")
		out, err := exec.Command("go", "build", "-o", build.path, "github.com/chartctl/chartctl/cmd/chartctl").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		b.Fatal(build.err)
	}
	return build.path
}

// node is one running `chartctl serve`.
type node struct {
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	url    string
	log    *lockedBuffer
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() < 1<<20 {
		l.buf.WriteString(s + "\n")
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var servingRE = regexp.MustCompile(`url=(https?://127\.0\.0\.1:\d+)`)

// startNode starts `chartctl serve args…` on a free loopback port and
// waits until /readyz answers 200.
func startNode(b *testing.B, args ...string) *node {
	b.Helper()
	n := &node{args: args, log: &lockedBuffer{}}
	n.start(b)
	return n
}

func (n *node) start(b *testing.B) {
	b.Helper()
	all := append([]string{"serve", "--addr", "127.0.0.1:0",
		"--rate-limit-global", "0", "--rate-limit-upload", "0", "--rate-limit-search", "0",
		"--max-concurrent-uploads", "0"}, n.args...)
	n.cmd = exec.Command(binary(b), all...)
	pr, pw := io.Pipe()
	n.cmd.Stderr = pw
	if err := n.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			n.log.line(line)
			if m := servingRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "chartctl serving") {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	n.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		pw.Close()
		close(exited)
	}(n.cmd, n.exited)
	select {
	case n.url = <-found:
	case <-n.exited:
		b.Fatalf("chartctl serve exited; its log:\n%s", n.log)
	case <-time.After(2 * time.Minute):
		b.Fatalf("chartctl serve did not start; its log:\n%s", n.log)
	}
	for {
		if r, err := client.Get(n.url + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop ends the process with SIGTERM (a graceful shutdown).
func (n *node) stop() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
	n.cmd = nil
}

// deployment is one mode's servers and the admin's API key.
type deployment struct {
	mode  string
	nodes []*node
	key   string

	indexOnce sync.Once
	repos     atomic.Int64
}

var (
	deployMu    sync.Mutex
	deployments = map[string]*deployment{}
	tempMu      sync.Mutex
	tempDirs    []string
)

func stopAll() {
	deployMu.Lock()
	defer deployMu.Unlock()
	for _, d := range deployments {
		for _, n := range d.nodes {
			n.stop()
		}
	}
	tempMu.Lock()
	for _, dir := range tempDirs {
		_ = os.RemoveAll(dir)
	}
	tempMu.Unlock()
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
}

// deploy returns the mode's shared deployment, starting it on first use:
// one bolt node on a data directory, or three replicas on one PostgreSQL
// database and one S3 bucket (with a shared secrets key, as in production).
func deploy(b *testing.B, mode string) *deployment {
	b.Helper()
	deployMu.Lock()
	defer deployMu.Unlock()
	if d := deployments[mode]; d != nil {
		return d
	}
	d := &deployment{mode: mode}
	switch mode {
	case boltMode:
		data := tempDir(b)
		d.nodes = []*node{startNode(b, "--data", data)}
		d.key = adminKey(b, data)
	case pgMode:
		db := pgtest.Shared(b).NewDatabase(b)
		bucket := s3test.Shared(b).NewBucket(b)
		keyFile := filepath.Join(tempDir(b), "secrets.key")
		if err := os.WriteFile(keyFile, bytes.Repeat([]byte("k"), 32), 0o600); err != nil {
			b.Fatal(err)
		}
		datas := []string{tempDir(b), tempDir(b), tempDir(b)}
		args := func(i int) []string {
			return []string{"--data", datas[i], "--database", db, "--blob-store", bucket, "--secrets-key-file", keyFile}
		}
		// The first creates the admin; the others then start at once.
		d.nodes = []*node{startNode(b, args(0)...), nil, nil}
		var wg sync.WaitGroup
		for i := 1; i < 3; i++ {
			wg.Go(func() { d.nodes[i] = startNode(b, args(i)...) })
		}
		wg.Wait()
		d.key = adminKey(b, datas[0])
	}
	deployments[mode] = d
	return d
}

// tempDir is a directory removed at the end of the run (b.TempDir would
// go with the first sub-benchmark that made it, while the deployment
// lives on).
func tempDir(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "chartctl-bench-data-")
	if err != nil {
		b.Fatal(err)
	}
	tempMu.Lock()
	tempDirs = append(tempDirs, dir)
	tempMu.Unlock()
	return dir
}

func adminKey(b *testing.B, data string) string {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join(data, "initial-admin.json"))
	if err != nil {
		b.Fatal(err)
	}
	var v struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.APIKey == "" {
		b.Fatalf("initial-admin.json: %v", err)
	}
	return v.APIKey
}

func do(method, url, key, ctype string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// newRepo creates a public repository with a fresh name.
func (d *deployment) newRepo(b *testing.B, prefix string) string {
	b.Helper()
	name := fmt.Sprintf("%s-%d", prefix, d.repos.Add(1))
	code, body, err := do("POST", d.nodes[0].url+"/v1/repositories", d.key, "application/json",
		[]byte(`{"name":"`+name+`","visibility":"public"}`))
	if err != nil || code != http.StatusOK {
		b.Fatalf("create repository %s: %d %s %v", name, code, body, err)
	}
	return name
}

// upload is one prepared chart upload.
type upload struct {
	body  []byte
	ctype string
}

func prepare(b *testing.B, n, set int) []upload {
	b.Helper()
	charts, err := corpus.Generate(n, set)
	if err != nil {
		b.Fatal(err)
	}
	return uploadsOf(b, charts)
}

// uploadsOf makes the /v1 multipart upload of each chart.
func uploadsOf(b *testing.B, charts []corpus.Chart) []upload {
	b.Helper()
	out := make([]upload, len(charts))
	for i, c := range charts {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, err := mw.CreateFormFile("chart", c.Filename())
		if err != nil {
			b.Fatal(err)
		}
		fw.Write(c.Archive)
		mw.Close()
		out[i] = upload{buf.Bytes(), mw.FormDataContentType()}
	}
	return out
}

// push sends u to repo on url and returns how long the answer took.
func (d *deployment) push(url, repo string, u upload) (time.Duration, error) {
	start := time.Now()
	code, body, err := do("POST", url+"/v1/repositories/"+repo+"/charts", d.key, u.ctype, u.body)
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	if code != http.StatusOK {
		return took, fmt.Errorf("upload: %d %s", code, body)
	}
	return took, nil
}

// percentile returns the p-th percentile (0..1) of ds in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return float64(s[i].Microseconds()) / 1000
}

// BenchmarkUpload: one pusher uploading distinct ~3 KiB charts to one
// server, one after another. ns/op is the time of one upload as the
// client sees it (the answer means the blob is durable and the record
// committed).
func BenchmarkUpload(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			d := deploy(b, mode)
			repo := d.newRepo(b, "upload")
			ups := prepare(b, b.N, 0)
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				took, err := d.push(d.nodes[0].url, repo, ups[i])
				if err != nil {
					b.Fatal(err)
				}
				times = append(times, took)
			}
			b.StopTimer()
			b.ReportMetric(percentile(times, 0.5), "p50-ms")
			b.ReportMetric(percentile(times, 0.99), "p99-ms")
		})
	}
}

// BenchmarkIndexYAML: GET index.yaml of a repository of 1,000 versions by
// 16 concurrent clients; the index is served from the replica's memory in
// both modes.
func BenchmarkIndexYAML(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			d := deploy(b, mode)
			d.indexOnce.Do(func() { d.fill(b, "index", 1000) })
			url := d.nodes[0].url + "/helm/index-fill/index.yaml"
			code, body, err := do("GET", url, d.key, "", nil)
			if err != nil || code != http.StatusOK || bytes.Count(body, []byte("\n    version: ")) != 1000 {
				b.Fatalf("index.yaml: %d %v (%d bytes)", code, err, len(body))
			}
			b.SetBytes(int64(len(body)))
			b.SetParallelism(max(1, pushers/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					code, _, err := do("GET", url, d.key, "", nil)
					if err != nil || code != http.StatusOK {
						b.Errorf("index.yaml: %d %v", code, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// fill uploads n charts into the repository named prefix-fill, with
// pushers concurrent uploads.
func (d *deployment) fill(b *testing.B, prefix string, n int) {
	b.Helper()
	repo := prefix + "-fill"
	// A YAML index, as the figures in docs/performance.md were measured
	// (new repositories serve JSON unless told).
	code, body, err := do("POST", d.nodes[0].url+"/v1/repositories", d.key, "application/json", []byte(`{"name":"`+repo+`","visibility":"public","index_format":"yaml"}`))
	if err != nil || code != http.StatusOK {
		b.Fatalf("create %s: %d %s %v", repo, code, body, err)
	}
	ups := prepare(b, n, 0)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range pushers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if _, err := d.push(d.nodes[0].url, repo, ups[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkPushers: 16 CI pipelines pushing distinct charts into one
// repository at once, spread over the deployment's servers (the three
// replicas in turn, as a round-robin load balancer would). ns/op is the
// run's wall time per push (so 1e9/ns/op is the throughput).
func BenchmarkPushers(b *testing.B) {
	for _, mode := range modes {
		name := mode + "/1-node"
		if mode == pgMode {
			name = mode + "/3-replicas"
		}
		b.Run(name, func(b *testing.B) {
			d := deploy(b, mode)
			repo := d.newRepo(b, "pushers")
			ups := prepare(b, b.N, 0)
			times := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range pushers {
				wg.Go(func() {
					for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
						took, err := d.push(d.nodes[i%len(d.nodes)].url, repo, ups[i])
						if err != nil {
							b.Error(err)
							return
						}
						times[i] = took
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pushes/s")
			b.ReportMetric(percentile(times, 0.5), "p50-ms")
			b.ReportMetric(percentile(times, 0.99), "p99-ms")
		})
	}
}

// largeN is the size of BenchmarkLargeRepository's repository.
func largeN(b *testing.B) int {
	if v := os.Getenv("CHARTCTL_BENCH_LARGE_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("CHARTCTL_BENCH_LARGE_N=%q: want a number ≥ 100", v)
		}
		return n
	}
	return 100_000
}

// large is one mode's server over a repository of largeN versions.
type large struct {
	node *node
	key  string
	n    int
}

var (
	largeMu sync.Mutex
	larges  = map[string]*large{}
)

// largeVersion is version i of the large repository: 100 charts, the
// same records in both modes.
func largeVersion(i int) *chartctl.ChartVersion {
	name := fmt.Sprintf("chart-%d", i%100)
	version := fmt.Sprintf("1.%d.0", i/100)
	sum := sha256.Sum256([]byte(strconv.Itoa(i)))
	return &chartctl.ChartVersion{
		Repository: "big", Name: name, Version: version,
		Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: 1000, CreatedAt: time.Now().UTC(),
		Metadata:   []byte(`{"apiVersion":"v2","name":"` + name + `","version":"` + version + `"}`),
		IndexEntry: []byte("  - apiVersion: v2\n    name: " + name + "\n    version: " + version + "\n"),
	}
}

// openLarge returns the mode's server over the large repository, seeding
// the store before the server first starts (the store writes the records
// itself: bolt through PutChartVersion, PostgreSQL in one INSERT of the
// rows the store would write), then restarting it once so the admin
// created at first start is not part of the start-up measured.
func openLarge(b *testing.B, mode string) *large {
	b.Helper()
	largeMu.Lock()
	defer largeMu.Unlock()
	if l := larges[mode]; l != nil {
		return l
	}
	ctx := context.Background()
	l := &large{n: largeN(b)}
	data := tempDir(b)
	seedStart := time.Now()
	var args []string
	switch mode {
	case boltMode:
		db, err := bolt.Open(filepath.Join(data, "chartctl.db"))
		if err != nil {
			b.Fatal(err)
		}
		if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "big", Visibility: chartctl.VisibilityPublic}); err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < l.n; i = int(next.Add(1)) - 1 {
					if _, _, _, err := db.PutChartVersion(ctx, largeVersion(i), chartctl.PutVersionOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		args = []string{"--data", data}
	case pgMode:
		url := pgtest.Shared(b).NewDatabase(b)
		db, err := postgres.Open(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		r := &chartctl.Repository{Name: "big", Visibility: chartctl.VisibilityPublic}
		if err := db.CreateRepository(ctx, r); err != nil {
			b.Fatal(err)
		}
		db.Close()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO chart_versions
			(repository_id, name, version, digest, size, created_at, metadata, index_entry, canonical_version)
			SELECT $1, 'chart-' || (i % 100), v, 'sha256:' || encode(sha256(i::text::bytea), 'hex'), 1000, now(),
				convert_to('{"apiVersion":"v2","name":"chart-' || (i % 100) || '","version":"' || v || '"}', 'UTF8'),
				convert_to('  - apiVersion: v2' || chr(10) || '    name: chart-' || (i % 100) || chr(10) || '    version: ' || v || chr(10), 'UTF8'),
				v
			FROM generate_series(0, $2 - 1) AS i, LATERAL (SELECT '1.' || (i / 100) || '.0' AS v) AS x`, r.ID, l.n); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
		conn.Close(ctx)
		keyFile := filepath.Join(data, "shared-secrets.key")
		if err := os.WriteFile(keyFile, bytes.Repeat([]byte("k"), 32), 0o600); err != nil {
			b.Fatal(err)
		}
		args = []string{"--data", data, "--database", url, "--blob-store", s3test.Shared(b).NewBucket(b), "--secrets-key-file", keyFile}
	}
	b.Logf("%s: seeded %d versions in %v", mode, l.n, time.Since(seedStart).Round(time.Millisecond))
	l.node = startNode(b, args...)
	l.key = adminKey(b, data)
	l.node.stop()
	l.node.start(b)
	code, body, err := do("GET", l.node.url+"/v1/repositories/big/charts?limit=1", l.key, "", nil)
	if err != nil || code != http.StatusOK || !bytes.Contains(body, []byte(fmt.Sprintf(`"total":%d`, l.n))) {
		b.Fatalf("the large repository: %d %v %.200s", code, err, body)
	}
	larges[mode] = l
	deployMu.Lock()
	deployments["large "+mode] = &deployment{nodes: []*node{l.node}}
	deployMu.Unlock()
	return l
}

// BenchmarkLargeRepository: a repository of 100,000 chart versions (100
// charts of 1,000). Startup restarts the server: ns/op is the time from
// starting the process to /readyz answering 200 (first-index-ms then
// reports the first index.yaml, which loads the repository's index into
// memory). FirstPage and MiddlePage read a page of 20 of the chart list,
// as the API and the dashboard do (ns/op and p50-ms per request).
func BenchmarkLargeRepository(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			l := openLarge(b, mode)
			b.Run("Startup", func(b *testing.B) {
				var firstIndex []time.Duration
				times := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					l.node.stop()
					b.StartTimer()
					start := time.Now()
					l.node.start(b)
					times = append(times, time.Since(start))
					b.StopTimer()
					t0 := time.Now()
					code, _, err := do("GET", l.node.url+"/helm/big/index.yaml", l.key, "", nil)
					if err != nil || code != http.StatusOK {
						b.Fatalf("index.yaml: %d %v", code, err)
					}
					firstIndex = append(firstIndex, time.Since(t0))
					b.StartTimer()
				}
				b.StopTimer()
				b.ReportMetric(percentile(times, 0.5), "p50-ms")
				b.ReportMetric(percentile(firstIndex, 0.5), "first-index-ms")
			})
			for _, page := range []struct {
				name string
				page int
			}{{"FirstPage", 1}, {"MiddlePage", l.n / 40}} {
				b.Run(page.name, func(b *testing.B) {
					url := fmt.Sprintf("%s/v1/repositories/big/charts?page=%d&limit=20", l.node.url, page.page)
					times := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for range b.N {
						start := time.Now()
						code, body, err := do("GET", url, l.key, "", nil)
						times = append(times, time.Since(start))
						if err != nil || code != http.StatusOK || !bytes.Contains(body, []byte(`"version"`)) {
							b.Fatalf("chart list: %d %v %.200s", code, err, body)
						}
					}
					b.StopTimer()
					b.ReportMetric(percentile(times, 0.5), "p50-ms")
				})
			}
		})
	}
}
