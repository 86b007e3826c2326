package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chartctl/chartctl/bench/corpus"
	"github.com/chartctl/chartctl/bench/stats"
	"github.com/chartctl/chartctl/internal/testkit"
)

// OCIConfig configures the OCI side-by-side bench of issue #32: chartctl's
// registry beside CNCF Distribution and zot, nginx serving the very bytes
// chartctl served, and a bare net/http handler answering them from memory
// with the headers chartctl sent (the very bytes of chartctl's answers).
type OCIConfig struct {
	// N is the number of chart versions of the chart measured (300).
	N int
	// BigTags is the number of tags of the chart whose tags/list pages are
	// measured at scale (100,000).
	BigTags int
	// Binary is the chartctl executable; Distribution the registry
	// executable (go install github.com/distribution/distribution/v3/cmd/registry@v3.1.2;
	// "" leaves Distribution out); Zot zot's executable (v2.1.20, built
	// from source; "" leaves zot and its columns out);
	// Helm a helm executable for the helm push rows ("" skips them);
	// NginxBinary nginx ("" for PATH).
	Binary, Distribution, Zot, Helm, NginxBinary string
	// Rounds is how many interleaved rounds to run.
	Rounds int
	// Duration is the length of one read measurement; Pushes the number
	// of pushes of one push measurement.
	Duration time.Duration
	Pushes   int
	// Slices splits each read measurement of a round into this many
	// slices of Duration/Slices, the servers taking turns slice by slice
	// (in a rotated order each slice), so that every server of a row is
	// measured over the same stretch of the round: on a shared machine
	// whose speed drifts within seconds, a server measured in one block
	// of Duration meets other weather than the next one (1: one block, as
	// runs before 2026-11-30 did; 0: slices of about DefaultSlice, at
	// most 20). The pushes of a round are split alike, in slices of about
	// Pushes/Slices pushes.
	Slices int
	// Conns is the number of connections of a read measurement.
	Conns int
	// ServeArgs are more arguments of chartctl's `serve`: say, its
	// PostgreSQL database and S3 blob store (--database, --blob-store),
	// run by whoever runs the bench; the report names them.
	ServeArgs []string
	// Replicas is how many more chartctl replicas to start on the same
	// ServeArgs (which must name a --database): they serve nothing of
	// the run, but the measured replica is then not alone on its
	// database, as behind a load balancer (docs/scale-out.md).
	Replicas int
	// TLS runs every server over HTTPS (HTTP/1.1) with one certificate
	// for 127.0.0.1 that every client trusts: chartctl with --tls-cert,
	// Distribution and zot with theirs, nginx with OpenSSL, the floor on
	// crypto/tls. The issue reads its targets over TLS within 2× of plain
	// HTTP, so the targets' table halves them.
	TLS bool
	// Log receives progress lines (os.Stderr when nil).
	Log io.Writer
	// Trace, when set, receives a line per measured slice: the server,
	// its requests or pushes, and the CPU time each server's processes,
	// the load generator and the kernel took during it (cputrace.go).
	Trace io.Writer
	// Command reproduces the run, for the report.
	Command string

	// tls is the run's certificate when TLS is set (RunOCISideBySide
	// makes it).
	tls *TLS
}

// Validate checks the configuration and fills defaults.
func (c *OCIConfig) Validate() error {
	switch {
	case c.N < 10 || c.N > 100_000:
		return fmt.Errorf("--n must be between 10 and 100000, got %d", c.N)
	case c.BigTags < 200 || c.BigTags > 1_000_000:
		return fmt.Errorf("--big-tags must be between 200 and 1000000, got %d", c.BigTags)
	case c.Binary == "":
		return errors.New("--binary is required")
	case c.Rounds < 1 || c.Rounds > 20:
		return fmt.Errorf("--rounds must be between 1 and 20, got %d", c.Rounds)
	case c.Duration < 500*time.Millisecond || c.Duration > time.Minute:
		return fmt.Errorf("--duration must be between 500ms and 1m, got %v", c.Duration)
	case c.Pushes < 1 || c.Pushes > 1000:
		return fmt.Errorf("--pushes must be between 1 and 1000, got %d", c.Pushes)
	case c.Conns < 1 || c.Conns > 256:
		return fmt.Errorf("--conns must be between 1 and 256, got %d", c.Conns)
	case c.Slices < 0 || c.Slices > 20:
		return fmt.Errorf("--slices must be between 0 (slices of %v) and 20, got %d", DefaultSlice, c.Slices)
	case c.Replicas < 0 || c.Replicas > 8:
		return fmt.Errorf("--replicas must be between 0 and 8, got %d", c.Replicas)
	case c.Replicas > 0 && !slices.ContainsFunc(c.ServeArgs, func(a string) bool { return strings.HasPrefix(a, "--database=") }):
		return errors.New("--replicas needs a shared database: pass --serve-arg=--database=postgres://…")
	}
	if c.Slices == 0 {
		c.Slices = min(max(int(c.Duration/DefaultSlice), 1), 20)
	}
	if c.Duration/time.Duration(c.Slices) < 100*time.Millisecond {
		return fmt.Errorf("--duration %v in %d slices is under 100ms a slice: use fewer slices or a longer duration", c.Duration, c.Slices)
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	return nil
}

// DefaultSlice is the length of a read's slices when OCIConfig.Slices is
// 0. The machine's speed moves from one second to the next (a trace of
// 2026-11-30: the load generator's CPU per request has a spread of 14–15 %
// and a correlation of about 0.6 with the slice after); in slices of
// 250 ms the servers of a row take turns four times a second, so that each
// meets the same weather: the manifest's rounds, against the bare
// handler, spread over 0.97–1.03 and 0.91–1.03 in two runs, where 1 s
// slices spread over 0.86–1.00 (docs/performance.md, "The machine's
// weather, traced").
const DefaultSlice = 250 * time.Millisecond

// ociServers are the servers of the report, in the order they are
// measured and their columns.
var ociServers = []string{"chartctl", "distribution", "zot", "nginx", "bare"}

// ociPeers are the peer registries, in order.
var ociPeers = []*ociPeer{distributionPeer, zotPeer}

// OCIRow is one measured operation: per server, one rate per round
// (requests/s for reads, pushes/s for pushes); a server that does not
// take part has no rates.
type OCIRow struct {
	Key, Label string
	// Bytes is the body size of a read.
	Bytes int
	Rates map[string][]float64
}

// OCIResults is a whole run.
type OCIResults struct {
	Config           OCIConfig
	Date             time.Time
	Machine          Machine
	LoadBefore       string
	LoadAfter        string
	DistributionInfo string
	// ZotInfo is zot's binary and version ("" when zot is left out).
	ZotInfo string
	// Settle is how long chartctl's background images job took, after
	// the fill, to go through it (chartctl_images_pending back at 0),
	// which the rounds wait for.
	Settle time.Duration
	// Memos is chartctl's chartctl_registry_memos when the rounds began
	// ("absent" on a store that keeps no registry memos).
	Memos string
	Rows  []*OCIRow
}

// ociRead is a read route: the request on each server (empty: the server
// does not take part) and the header it sends.
type ociRead struct {
	key, label string
	paths      map[string]string
	header     []string
	auth       bool // chartctl needs the admin's credential (the catalog)
	helmOnly   bool // a Helm repository path: the peers have none
}

// RunOCISideBySide runs the bench.
func RunOCISideBySide(ctx context.Context, cfg OCIConfig) (*OCIResults, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "ocibench: "+format+"\n", args...) }
	res := &OCIResults{Config: cfg, Date: time.Now().UTC(), Machine: DescribeMachine(cfg.Binary), LoadBefore: loadAvg()}
	dir, err := os.MkdirTemp("", "ocibench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if cfg.TLS {
		if cfg.tls, err = NewTLS(filepath.Join(dir, "tls")); err != nil {
			return nil, err
		}
	}
	t := cfg.tls

	// chartctl.
	addr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	proc := &Process{Binary: cfg.Binary, DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "chartctl.log"), TLS: t, Extra: cfg.ServeArgs}
	if err := proc.Start(); err != nil {
		return nil, err
	}
	defer func() { _, _ = proc.Stop() }()
	if _, err := proc.WaitHealthy(ctx); err != nil {
		return nil, err
	}
	admin, err := ReadInitialAdmin(proc.DataDir)
	if err != nil {
		return nil, err
	}
	ours := proc.URL()
	for i := range cfg.Replicas {
		raddr, err := FreeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		r := &Process{Binary: cfg.Binary, DataDir: filepath.Join(dir, fmt.Sprintf("replica%d", i+1)), Addr: raddr,
			LogPath: filepath.Join(dir, fmt.Sprintf("replica%d.log", i+1)), TLS: t, Extra: cfg.ServeArgs}
		if err := r.Start(); err != nil {
			return nil, err
		}
		defer func() { _, _ = r.Stop() }()
		if _, err := r.WaitHealthy(ctx); err != nil {
			return nil, err
		}
	}

	// The peers (Distribution, zot), filesystem storage, no auth.
	var peers []*runningPeer
	for _, peer := range ociPeers {
		bin := peer.binary(&cfg)
		if bin == "" {
			continue
		}
		p, err := startPeer(ctx, peer, bin, dir, t)
		if err != nil {
			return nil, err
		}
		defer p.stop()
		peers = append(peers, p)
		*peer.info(res) = p.info
	}
	// The registries, chartctl's first, and every server's URL.
	registries := []string{"chartctl"}
	bases := map[string]string{"chartctl": ours}
	for _, p := range peers {
		registries = append(registries, p.key)
		bases[p.key] = p.base
	}

	client := t.Trust(NewClient(8, time.Minute))
	defer client.CloseIdleConnections()
	bt := Target{Name: "chartctl", Token: admin.APIKey, TLS: t}
	if bt.Base, err = url.Parse(ours); err != nil {
		return nil, err
	}
	for _, repo := range []string{"bench", "big", "hpush", "rpush"} {
		if err := createRepo(ctx, client, bt, repo, "public"); err != nil {
			return nil, err
		}
	}

	// The measured chart: N versions pushed over OCI to every registry,
	// and one version with a big (incompressible, ≥ 64 KiB) archive.
	logf("pushing %d versions to %s", cfg.N, strings.Join(registries, ", "))
	var mid *testkit.OCIChart
	for i := range cfg.N {
		c, err := testkit.NewOCIChart("web", fmt.Sprintf("1.0.%d", i), ChartArchive("web", fmt.Sprintf("1.0.%d", i), 0))
		if err != nil {
			return nil, err
		}
		for _, srv := range registries {
			if err := testkit.PushLikeHelm(client, bases[srv], "bench", "admin", admin.APIKey, c); err != nil {
				return nil, fmt.Errorf("push %s to %s: %w", c.Tag, srv, err)
			}
		}
		if i == cfg.N/2 {
			mid = c
		}
	}
	big, err := testkit.NewOCIChart("blob", "1.0.0", ChartArchive("blob", "1.0.0", 96<<10))
	if err != nil {
		return nil, err
	}
	for _, srv := range registries {
		if err := testkit.PushLikeHelm(client, bases[srv], "bench", "admin", admin.APIKey, big); err != nil {
			return nil, fmt.Errorf("push %s to %s: %w", big.Tag, srv, err)
		}
	}

	// BigTags versions of one chart: on chartctl uploaded through /v1
	// (minimal charts, concurrently); on a peer one pushed version and
	// its tag written BigTags times into its storage layout (what its
	// tags/list reads: Distribution's tag directories, zot's index.json).
	logf("filling chart big/big with %d versions (this takes a while)", cfg.BigTags)
	if err := fillBig(ctx, bt, cfg.BigTags, logf); err != nil {
		return nil, err
	}
	filled := time.Now()
	bigOne, err := testkit.NewOCIChart("big", "1.0.0", ChartArchive("big", "1.0.0", 0))
	if err != nil {
		return nil, err
	}
	for _, p := range peers {
		if err := testkit.PushLikeHelm(client, p.base, "big", "", "", bigOne); err != nil {
			return nil, fmt.Errorf("push big to %s: %w", p.key, err)
		}
		if err := p.writeTags(p.root, "big/big", bigOne.ManifestDigest, cfg.BigTags); err != nil {
			return nil, fmt.Errorf("%s tags: %w", p.key, err)
		}
	}
	bigLast := bigTag(cfg.BigTags / 2)

	manifest := "/v2/bench/web/manifests/" + mid.Tag
	small := "/v2/bench/web/blobs/" + digestOf(mid.Config)
	bigBlob := "/v2/bench/blob/blobs/" + digestOf(big.Archive)
	reads := []ociRead{
		{key: "manifest", label: "manifest GET (by tag)", header: []string{"Accept: application/vnd.oci.image.manifest.v1+json"}},
		{key: "small-blob", label: "small blob GET (config)"},
		{key: "big-blob", label: fmt.Sprintf("big blob GET (%d KiB archive)", len(big.Archive)>>10)},
		{key: "tags-300", label: fmt.Sprintf("tags/list, %d tags, whole list", cfg.N)},
		{key: "tags-300-page", label: fmt.Sprintf("tags/list, %d tags, ?n=100&last=middle", cfg.N)},
		{key: "tags-big-page", label: fmt.Sprintf("tags/list, %s tags, ?n=100&last=middle", thousands(cfg.BigTags))},
		{key: "catalog", label: "_catalog?n=100", auth: true},
		// The big chart's Helm index as Helm asks for it: its gzip form,
		// which chartctl keeps on disk and sends with sendfile once it
		// passes 64 KiB.
		{key: "index-gzip", label: fmt.Sprintf("index.yaml of %s versions, gzip", thousands(cfg.BigTags)), header: []string{"Accept-Encoding: gzip"}, helmOnly: true},
	}
	paths := [][2]string{ // chartctl/peer path, static file path
		{manifest, manifest},
		{small, small},
		{bigBlob, bigBlob},
		{"/v2/bench/web/tags/list", "/v2/bench/web/tags/list"},
		{"/v2/bench/web/tags/list?n=100&last=" + mid.Tag, "/v2/bench/web/tags/page"},
		{"/v2/big/big/tags/list?n=100&last=" + bigLast, "/v2/big/big/tags/page"},
		{"/v2/_catalog?n=100", "/v2/_catalog"},
		{"/helm/big/index.yaml", "/helm/big/index.yaml.gz"},
	}
	www := filepath.Join(dir, "www")
	floor := &floorServer{files: map[string]floorFile{}, tls: t}
	for i := range reads {
		r := &reads[i]
		r.paths = map[string]string{"chartctl": paths[i][0]}
		if !r.helmOnly {
			for _, p := range peers {
				r.paths[p.key] = paths[i][0]
			}
		}
		header := r.header
		if r.auth {
			header = append(slices.Clone(header), "Authorization: Bearer "+admin.APIKey)
		}
		resp, body, err := get(ctx, client, ours+paths[i][0], header)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s on chartctl: %d %s", paths[i][0], resp.StatusCode, body)
		}
		for _, p := range peers {
			if _, ok := r.paths[p.key]; !ok {
				continue
			}
			// A peer must answer every read, and with chartctl's bytes
			// where they are the same object, for the comparison to hold
			// (tags and catalog pages differ in order or in content, not
			// in kind).
			presp, pbody, err := get(ctx, client, p.base+paths[i][0], r.header)
			if err != nil {
				return nil, err
			}
			if presp.StatusCode != 200 {
				return nil, fmt.Errorf("GET %s on %s: %d %s", paths[i][0], p.title, presp.StatusCode, pbody)
			}
			if (r.key == "manifest" || strings.Contains(r.key, "blob")) && !bytes.Equal(pbody, body) {
				return nil, fmt.Errorf("GET %s: %s serves other bytes than chartctl", paths[i][0], p.title)
			}
		}
		file := filepath.Join(www, filepath.FromSlash(paths[i][1]))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(file, body, 0o644); err != nil {
			return nil, err
		}
		r.paths["nginx"], r.paths["bare"] = paths[i][1], paths[i][1]
		// The floor answers with chartctl's bytes, headers included: each
		// header is work for the server and the client alike.
		floor.files[paths[i][1]] = floorFile{body: body, etag: resp.Header.Get("Etag"), header: floorHeader(resp.Header)}
		row := &OCIRow{Key: r.key, Label: r.label, Bytes: len(body), Rates: map[string][]float64{}}
		res.Rows = append(res.Rows, row)
	}
	naddr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	ngx := &Nginx{Binary: cfg.NginxBinary, Dir: filepath.Join(dir, "nginx"), Root: www, Addr: naddr, TLS: t}
	if err := ngx.Start(ctx); err != nil {
		return nil, err
	}
	defer ngx.Stop()
	floorURL, err := floor.start()
	if err != nil {
		return nil, err
	}
	defer floor.stop()
	bases["nginx"], bases["bare"] = t.URL(naddr), floorURL
	pids := map[string]int{"chartctl": proc.PID(), "nginx": ngx.PID(), "bare": floor.pid()}
	for _, p := range peers {
		pids[p.key] = p.pid
	}
	tr := newCPUTracer(cfg.Trace, pids)

	pushRows := []*OCIRow{
		{Key: "raw-push", Label: fmt.Sprintf("raw push (Helm's requests, no Helm process), %d per round", cfg.Pushes), Rates: map[string][]float64{}},
	}
	if cfg.Helm != "" {
		pushRows = append(pushRows, &OCIRow{Key: "helm-push", Label: fmt.Sprintf("`helm push`, %d per round", cfg.Pushes), Rates: map[string][]float64{}})
		if err := helmLogin(ctx, cfg.Helm, dir, addr, admin.APIKey, t); err != nil {
			return nil, err
		}
	}
	res.Rows = append(res.Rows, pushRows...)

	// The fill leaves chartctl's images job a backlog that it goes
	// through in the background; the rounds measure the server at rest,
	// as the peers are (they have no such job).
	if err := waitImagesSettled(ctx, client, ours, logf); err != nil {
		return nil, err
	}
	res.Settle = time.Since(filled)
	// The measured replica answers its hottest reads from memory once the
	// idle replicas have acknowledged it (internal/postgres/sharedepoch.go);
	// the table says whether it did when the rounds began.
	if res.Memos, err = metricValue(ctx, client, ours, "chartctl_registry_memos"); err != nil {
		return nil, err
	}

	pushed := 0
	for round := range cfg.Rounds {
		logf("round %d of %d", round+1, cfg.Rounds)
		for i, r := range reads {
			rates, err := measureRead(ctx, r, bases, cfg, "Authorization: Bearer "+admin.APIKey, round, tr)
			if err != nil {
				return nil, err
			}
			for _, srv := range ociServers {
				if rps, ok := rates[srv]; ok {
					res.Rows[i].Rates[srv] = append(res.Rows[i].Rates[srv], rps)
					logf("  %-14s %-12s %9.0f/s", r.key, srv, rps)
				}
			}
		}
		for _, row := range pushRows {
			charts := make([]*testkit.OCIChart, cfg.Pushes)
			for j := range charts {
				v := fmt.Sprintf("2.%d.%d", round, pushed+j)
				if charts[j], err = testkit.NewOCIChart("p"+row.Key[:1], v, ChartArchive("p"+row.Key[:1], v, 0)); err != nil {
					return nil, err
				}
			}
			repo := map[string]string{"raw-push": "rpush", "helm-push": "hpush"}[row.Key]
			rates, err := measurePushes(registries, charts, cfg.Slices, round, tr, row.Key, func(srv string, c *testkit.OCIChart) error {
				if row.Key == "raw-push" {
					return testkit.PushLikeHelm(client, bases[srv], repo, "admin", admin.APIKey, c)
				}
				return helmPush(ctx, cfg.Helm, dir, c, strings.TrimPrefix(bases[srv], t.Scheme()+"://")+"/"+repo, t)
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", row.Key, err)
			}
			for _, srv := range registries {
				row.Rates[srv] = append(row.Rates[srv], rates[srv])
				logf("  %-14s %-12s %9.1f pushes/s", row.Key, srv, rates[srv])
			}
			pushed += cfg.Pushes
		}
	}
	res.LoadAfter = loadAvg()
	return res, nil
}

// measureRead measures read r on every server that takes part, in
// cfg.Slices slices of cfg.Duration/cfg.Slices each, taken in turn
// (inTurns). A server's rate is its successful requests over the time its
// slices took. auth is the header chartctl needs for a read marked auth;
// tr traces each slice.
func measureRead(ctx context.Context, r ociRead, bases map[string]string, cfg OCIConfig, auth string, round int, tr *cpuTracer) (map[string]float64, error) {
	var srvs []string
	for _, srv := range ociServers {
		if _, ok := r.paths[srv]; ok {
			srvs = append(srvs, srv)
		}
	}
	slice := cfg.Duration / time.Duration(cfg.Slices)
	requests := map[string]int{}
	elapsed := map[string]time.Duration{}
	err := inTurns(srvs, round, cfg.Slices, func(k int, srv string) error {
		header := r.header
		if r.auth && srv == "chartctl" {
			header = append(slices.Clone(header), auth)
		}
		end := tr.begin(r.key, round, k, srv)
		lr, err := runLoad(ctx, Load{Conns: cfg.Conns, Duration: slice, NewRequest: getRequest(bases[srv]+r.paths[srv], header), TLS: cfg.tls})
		if err != nil {
			return fmt.Errorf("%s on %s: %w", r.key, srv, err)
		}
		end(lr.Requests, lr.Elapsed)
		requests[srv] += lr.Requests
		elapsed[srv] += lr.Elapsed
		return nil
	})
	if err != nil {
		return nil, err
	}
	return perSecond(srvs, requests, elapsed), nil
}

// measurePushes pushes every chart of charts to each of srvs with push,
// in up to slices slices of about the same number of charts, taken in
// turn (inTurns). A server's rate is len(charts) over the time its slices
// took. tr traces each slice as operation op.
func measurePushes(srvs []string, charts []*testkit.OCIChart, slices, round int, tr *cpuTracer, op string, push func(srv string, c *testkit.OCIChart) error) (map[string]float64, error) {
	slices = max(min(slices, len(charts)), 1)
	pushed := map[string]int{}
	elapsed := map[string]time.Duration{}
	err := inTurns(srvs, round, slices, func(k int, srv string) error {
		end := tr.begin(op, round, k, srv)
		start, n := time.Now(), 0
		for _, c := range charts[len(charts)*k/slices : len(charts)*(k+1)/slices] {
			if err := push(srv, c); err != nil {
				return fmt.Errorf("%s to %s: %w", c.Tag, srv, err)
			}
			n++
		}
		took := time.Since(start)
		pushed[srv] += n
		elapsed[srv] += took
		end(n, took)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return perSecond(srvs, pushed, elapsed), nil
}

// inTurns calls fn for each of slices slices and each server of srvs:
// slice by slice, each server in turn, the order rotated by one server
// each slice, so that every server is measured across the same stretch
// of time, and by one more each round, so that no server always takes
// the first slice after the round's pushes (whose background work, on
// any of the servers, and the kernel's write-back of their files, fall
// on it). It stops at fn's first error.
func inTurns(srvs []string, round, slices int, fn func(slice int, srv string) error) error {
	for k := range slices {
		for j := range srvs {
			if err := fn(k, srvs[(round+j+k)%len(srvs)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// perSecond is each server's count over its elapsed time (no rate for a
// server with no time).
func perSecond(srvs []string, counts map[string]int, elapsed map[string]time.Duration) map[string]float64 {
	rates := map[string]float64{}
	for _, srv := range srvs {
		if elapsed[srv] > 0 {
			rates[srv] = float64(counts[srv]) / elapsed[srv].Seconds()
		}
	}
	return rates
}

// metricValue returns the value of the unlabelled metric name on chartctl
// at base's /metrics, or "absent".
func metricValue(ctx context.Context, client *http.Client, base, name string) (string, error) {
	_, body, err := get(ctx, client, base+"/metrics", nil)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "absent", nil
}

// waitImagesSettled waits, up to 15 minutes, until chartctl at base
// reports chartctl_images_pending 0.
func waitImagesSettled(ctx context.Context, client *http.Client, base string, logf func(string, ...any)) error {
	deadline := time.Now().Add(15 * time.Minute)
	var last time.Time
	for {
		pending, err := metricValue(ctx, client, base, "chartctl_images_pending")
		if err != nil {
			return err
		}
		switch {
		case pending == "absent":
			return errors.New("chartctl's /metrics has no chartctl_images_pending")
		case pending == "0":
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("chartctl's images job still has %s versions pending after 15 minutes", pending)
		}
		if time.Since(last) >= 10*time.Second {
			logf("waiting for chartctl's background images job: %s versions pending", pending)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// getRequest returns a Load's request builder for a GET of u with header.
func getRequest(u string, header []string) func(ctx context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		for _, h := range header {
			k, v, _ := strings.Cut(h, ":")
			req.Header.Set(k, strings.TrimSpace(v))
		}
		return req, nil
	}
}

// fillBig uploads n minimal versions of chart big to repository big of
// chartctl through /v1, eight at a time.
func fillBig(ctx context.Context, t Target, n int, logf func(string, ...any)) error {
	t.Field, t.UploadPath = "chart", "/v1/repositories/big/charts"
	const batch = 5000
	for start := 0; start < n; start += batch {
		var charts []corpus.Chart
		for i := start; i < min(n, start+batch); i++ {
			charts = append(charts, corpus.Chart{Name: "big", Version: bigTag(i), Archive: ChartArchive("big", bigTag(i), 0)})
		}
		if _, _, err := UploadConcurrent(ctx, t, charts, 8); err != nil {
			return err
		}
		logf("  %d of %d", min(n, start+batch), n)
	}
	return nil
}

// bigTag is the i-th version of chart big.
func bigTag(i int) string { return fmt.Sprintf("1.%d.%d", i/1000, i%1000) }

// ChartArchive returns a chart archive of name and version laid out as
// `helm package` does, with pad bytes of random (incompressible) base64
// in a file when pad > 0, for a blob of a chosen size.
func ChartArchive(name, version string, pad int) []byte {
	files := map[string]string{
		"Chart.yaml":           fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\ndescription: A chart\ntype: application\n", name, version),
		"values.yaml":          "replicaCount: 1\n",
		"templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"files/.keep-for-size": "",
	}
	if pad > 0 {
		raw := make([]byte, pad*3/4)
		_, _ = rand.Read(raw)
		files["files/random.txt"] = base64.StdEncoding.EncodeToString(raw)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range []string{"Chart.yaml", "values.yaml", "templates/cm.yaml", "files/.keep-for-size", "files/random.txt"} {
		content, ok := files[p]
		if !ok {
			continue
		}
		_ = tw.WriteHeader(&tar.Header{Name: name + "/" + p, Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(1767225600, 0)})
		_, _ = tw.Write([]byte(content))
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes()
}

// helmLogin logs helm (its registry config in dir) in to chartctl, over
// plain HTTP or trusting t's CA.
func helmLogin(ctx context.Context, helm, dir, addr, key string, t *TLS) error {
	cmd := exec.CommandContext(ctx, helm, append([]string{"registry", "login", addr, "--username", "admin", "--password-stdin"}, helmTransport(t)...)...)
	cmd.Env = helmEnv(dir)
	cmd.Stdin = strings.NewReader(key)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm registry login: %v: %s", err, out)
	}
	return nil
}

// helmPush runs `helm push` of c to oci://target, over plain HTTP or
// trusting t's CA.
func helmPush(ctx context.Context, helm, dir string, c *testkit.OCIChart, target string, t *TLS) error {
	file := filepath.Join(dir, c.Name+"-"+strings.ReplaceAll(c.Tag, "_", "+")+".tgz")
	if err := os.WriteFile(file, c.Archive, 0o644); err != nil {
		return err
	}
	defer os.Remove(file)
	cmd := exec.CommandContext(ctx, helm, append([]string{"push", file, "oci://" + target}, helmTransport(t)...)...)
	cmd.Env = helmEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm push: %v: %s", err, out)
	}
	return nil
}

// helmTransport are helm's flags for a registry over plain HTTP, or over
// HTTPS with t's certificate.
func helmTransport(t *TLS) []string {
	if t == nil {
		return []string{"--plain-http"}
	}
	return []string{"--ca-file", t.CAFile}
}

// helmEnv keeps helm's configuration and caches in dir.
func helmEnv(dir string) []string {
	h := filepath.Join(dir, "helm")
	return append(os.Environ(), "HELM_CONFIG_HOME="+h, "HELM_CACHE_HOME="+h+"/cache", "HELM_DATA_HOME="+h+"/data",
		"HELM_REGISTRY_CONFIG="+h+"/registry.json")
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func digestOf(b []byte) string { return sha256Digest(b) }

// Markdown renders the results: medians over the rounds per server, the
// ratios of chartctl to each other server and, per round, to each peer;
// with zot beside Distribution, also the targets against the
// peers. Without zot the table is the one of Distribution alone.
func (r *OCIResults) Markdown() string {
	var b strings.Builder
	peerInfo := r.DistributionInfo
	if r.ZotInfo != "" {
		peerInfo += "; " + r.ZotInfo
	}
	reads := fmt.Sprintf("reads %v each", r.Config.Duration)
	if r.Config.Slices > 1 {
		reads = fmt.Sprintf("reads %v each per round, in %d slices of %v taken in turn by the servers", r.Config.Duration, r.Config.Slices, r.Config.Duration/time.Duration(r.Config.Slices))
	}
	transport := "plain HTTP; nginx from Debian (sendfile on)"
	if r.Config.TLS {
		transport = "every server over TLS (HTTP/1.1, one ECDSA P-256 certificate for 127.0.0.1 that every client trusts; chartctl and the floor on Go's crypto/tls, nginx from Debian on OpenSSL, without kernel TLS, so without sendfile)"
	}
	fmt.Fprintf(&b, "Run %s on %s; %d rounds, interleaved (each operation on each server in turn); %s, on %d connections (Go load generator); pushes %d in a row, one client. Load average before %s, after %s (the machine is shared). %s; %s.\n\n",
		r.Date.Format("2006-01-02 15:04 UTC"), fmt.Sprintf("%d CPUs (%s)", r.Machine.CPUs, r.Machine.CPUModel), r.Config.Rounds, reads, r.Config.Conns, r.Config.Pushes, r.LoadBefore, r.LoadAfter, peerInfo, transport)
	fmt.Fprintf(&b, "Command: `%s`\n\n", r.Config.Command)
	if len(r.Config.ServeArgs) > 0 {
		fmt.Fprintf(&b, "chartctl served with `%s` besides the loopback address and a data directory.\n\n", strings.Join(r.Config.ServeArgs, " "))
	}
	if r.Config.Replicas > 0 {
		fmt.Fprintf(&b, "%d more chartctl replica(s) ran on the same database and blob store, idle: the measured replica was not alone on its database (`chartctl_registry_memos` %s when the rounds began: 1 answers from memory under the replicas' shared epoch, 0 reads the database every time).\n\n", r.Config.Replicas, r.Memos)
	}
	fmt.Fprintf(&b, "The rounds began once chartctl's background images job had gone through the versions of the fill (`chartctl_images_pending` back at 0, %.0f s after the fill).\n\n", r.Settle.Seconds())

	// Distribution's columns are there even without it (as "–"); zot's
	// only when it ran.
	peers := []string{"distribution"}
	if r.Config.Zot != "" {
		peers = append(peers, "zot")
	}
	servers := slices.Concat([]string{"chartctl"}, peers, []string{"nginx", "bare"})
	others := slices.Concat(peers, []string{"bare", "nginx"})
	b.WriteString("| operation | bytes |")
	for _, s := range servers {
		fmt.Fprintf(&b, " %s /s |", ociTitles[s][0])
	}
	for _, s := range others {
		fmt.Fprintf(&b, " ÷ %s |", ociTitles[s][1])
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", 1+len(servers)+len(others)) + "\n")
	for _, row := range r.Rows {
		med := row.medians()
		bytesCell := "–"
		if row.Bytes > 0 {
			bytesCell = fmt.Sprint(row.Bytes)
		}
		fmt.Fprintf(&b, "| %s | %s |", row.Label, bytesCell)
		for _, s := range servers {
			fmt.Fprintf(&b, " %s |", rateCell(med, s))
		}
		for _, s := range others {
			fmt.Fprintf(&b, " %s |", ratioCell(med, s))
		}
		b.WriteString("\n")
	}
	for _, other := range others {
		line := ""
		for _, row := range r.Rows {
			var parts []string
			for i := range row.Rates["chartctl"] {
				if i < len(row.Rates[other]) {
					parts = append(parts, roundRatio(row.Rates["chartctl"][i], row.Rates[other][i]))
				}
			}
			if len(parts) > 0 {
				line += fmt.Sprintf(" %s %s;", row.Key, strings.Join(parts, "/"))
			}
		}
		if line != "" {
			fmt.Fprintf(&b, "\nPer round (chartctl ÷ %s):%s\n", ociTitles[other][1], line)
		}
	}
	if none := r.noneDone(servers); len(none) > 0 {
		fmt.Fprintf(&b, "\nNo request completed within the time a server had for it in a round (its ratios there are \"–\"): %s.\n", strings.Join(none, "; "))
	}
	r.writeTargets(&b, len(peers) > 1)
	return b.String()
}

// ociTitles are each server's titles in the table: of its rate column
// and of its ratio column.
var ociTitles = map[string][2]string{
	"chartctl":     {"chartctl", ""},
	"distribution": {"Distribution", "Distribution"},
	"zot":          {"zot", "zot"},
	"nginx":        {"nginx", "nginx"},
	"bare":         {"bare net/http", "bare"},
}

// medians are the row's median rates of the servers that took part.
func (row *OCIRow) medians() map[string]float64 {
	med := map[string]float64{}
	for s, v := range row.Rates {
		if len(v) > 0 {
			med[s] = median(v)
		}
	}
	return med
}

// rateCell is server s's median rate, "–" when it did not take part.
func rateCell(med map[string]float64, s string) string {
	v, ok := med[s]
	if !ok {
		return "–"
	}
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// ratioCell is chartctl's median rate divided by server s's, "–" when
// either did not take part or s completed no request (see noneDone).
func ratioCell(med map[string]float64, s string) string {
	if _, ok := med[s]; !ok || med["chartctl"] == 0 || med[s] == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", stats.Ratio(med["chartctl"], med[s]))
}

// roundRatio is a per-round ratio, "–" when the other server completed no
// request in that round.
func roundRatio(ours, other float64) string {
	if other == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", stats.Ratio(ours, other))
}

// noneDone lists, per row, those of servers that completed no request in
// some round (a request slower than the time they had), with those rounds.
func (r *OCIResults) noneDone(servers []string) []string {
	var out []string
	for _, row := range r.Rows {
		for _, s := range servers {
			var rounds []string
			for i, v := range row.Rates[s] {
				if v == 0 {
					rounds = append(rounds, fmt.Sprint(i+1))
				}
			}
			if len(rounds) > 0 {
				out = append(out, fmt.Sprintf("%s on %s in round %s", row.Key, ociTitles[s][0], strings.Join(rounds, ", ")))
			}
		}
	}
	return out
}

// ociTargets are issue #32's targets for the registry. Against "faster"
// (the faster peer, or both peers) a target is checked against the
// faster of Distribution and zot in the row, by median rate; the raw push
// target names Distribution and stays against it; the floors are the
// bare net/http handler and nginx serving the same bytes.
var ociTargets = []struct {
	key, label string
	target     float64
	against    string // a server of ociServers, or "faster"
}{
	{"manifest", "manifest GET ≥ 0.9 of the bare handler", 0.9, "bare"},
	{"small-blob", "small blob GET ≥ 0.9 of the bare handler", 0.9, "bare"},
	{"big-blob", "big blob (≥ 64 KiB) GET ≥ 0.8 of nginx", 0.8, "nginx"},
	{"index-gzip", "`index.yaml` (≥ 64 KiB) ≥ 0.8 of nginx", 0.8, "nginx"},
	{"tags-300", "`tags/list` ≥ 1.5× the faster peer (whole list)", 1.5, "faster"},
	{"tags-300-page", "`tags/list` ≥ 1.5× the faster peer (a page)", 1.5, "faster"},
	{"tags-big-page", "`tags/list` ≥ 1.5× the faster peer (a page of the big chart)", 1.5, "faster"},
	{"helm-push", "`helm push` at least even with both peers", 1, "faster"},
	{"raw-push", "raw push ≥ 2× Distribution", 2, "distribution"},
}

// writeTargets writes the table of ociTargets, for the rows that were
// measured on chartctl and on the server the target is against; the
// targets against the faster peer only when both peers ran.
func (r *OCIResults) writeTargets(b *strings.Builder, bothPeers bool) {
	var lines []string
	for _, t := range ociTargets {
		i := slices.IndexFunc(r.Rows, func(row *OCIRow) bool { return row.Key == t.key })
		if i < 0 || (t.against == "faster" && !bothPeers) {
			continue
		}
		med := r.Rows[i].medians()
		against := t.against
		if against == "faster" {
			against = "distribution"
			if med["zot"] > med["distribution"] {
				against = "zot"
			}
		}
		if med["chartctl"] == 0 || med[against] == 0 {
			continue
		}
		ratio := stats.Ratio(med["chartctl"], med[against])
		label, target := t.label, t.target
		if r.Config.TLS {
			// Over TLS the targets hold within 2×.
			target /= 2
			label += ", over TLS within 2×"
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %.2f | %s |\n", label, ociTitles[against][0], rateCell(med, against), ratio, verdictRatio(ratio, target)))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nTargets, by median rate")
	if bothPeers {
		b.WriteString(" (\"the faster peer\": the faster of Distribution and zot in that row)")
	}
	b.WriteString(":\n\n| target | against | its /s | chartctl ÷ it | verdict |\n|---|---|---:|---:|---|\n")
	for _, l := range lines {
		b.WriteString(l)
	}
}

// JSON is the raw figures, for whoever reruns and compares.
func (r *OCIResults) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }
