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
// registry beside CNCF Distribution, nginx serving the very bytes chartctl
// served, and a bare net/http handler answering them from memory.
type OCIConfig struct {
	// N is the number of chart versions of the chart measured (300).
	N int
	// BigTags is the number of tags of the chart whose tags/list pages are
	// measured at scale (100,000).
	BigTags int
	// Binary is the chartctl executable; Distribution the registry
	// executable (go install github.com/distribution/distribution/v3/cmd/registry@v3.1.2;
	// "" leaves Distribution out);
	// Helm a helm executable for the helm push rows ("" skips them);
	// NginxBinary nginx ("" for PATH).
	Binary, Distribution, Helm, NginxBinary string
	// Rounds is how many interleaved rounds to run.
	Rounds int
	// Duration is the length of one read measurement; Pushes the number
	// of pushes of one push measurement.
	Duration time.Duration
	Pushes   int
	// Conns is the number of connections of a read measurement.
	Conns int
	// Log receives progress lines (os.Stderr when nil).
	Log io.Writer
	// Command reproduces the run, for the report.
	Command string
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
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	return nil
}

// ociServers are the columns of the report, in order.
var ociServers = []string{"chartctl", "distribution", "nginx", "bare"}

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
	Rows             []*OCIRow
}

// ociRead is a read route: the request on each server (empty: the server
// does not take part) and the header it sends.
type ociRead struct {
	key, label string
	paths      map[string]string
	header     []string
	auth       bool // chartctl needs the admin's credential (the catalog)
	helmOnly   bool // a Helm repository path: Distribution has none
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

	// chartctl.
	addr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	proc := &Process{Binary: cfg.Binary, DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "chartctl.log")}
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
	ours := "http://" + addr

	// Distribution, filesystem storage, no auth.
	var theirs, droot string
	if cfg.Distribution != "" {
		stop, base, root, info, err := startDistribution(ctx, cfg.Distribution, dir)
		if err != nil {
			return nil, err
		}
		defer stop()
		theirs, droot, res.DistributionInfo = base, root, info
	}

	client := NewClient(8, time.Minute)
	defer client.CloseIdleConnections()
	bt := Target{Name: "chartctl", Token: admin.APIKey}
	if bt.Base, err = url.Parse(ours); err != nil {
		return nil, err
	}
	for _, repo := range []string{"bench", "big", "hpush", "rpush"} {
		if err := createRepo(ctx, client, bt, repo, "public"); err != nil {
			return nil, err
		}
	}

	// The measured chart: N versions pushed over OCI to both registries,
	// and one version with a big (incompressible, ≥ 64 KiB) archive.
	logf("pushing %d versions to chartctl and Distribution", cfg.N)
	var mid *testkit.OCIChart
	for i := range cfg.N {
		c, err := testkit.NewOCIChart("web", fmt.Sprintf("1.0.%d", i), ChartArchive("web", fmt.Sprintf("1.0.%d", i), 0))
		if err != nil {
			return nil, err
		}
		for _, base := range nonEmpty(ours, theirs) {
			if err := testkit.PushLikeHelm(client, base, "bench", "admin", admin.APIKey, c); err != nil {
				return nil, fmt.Errorf("push %s to %s: %w", c.Tag, base, err)
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
	for _, base := range nonEmpty(ours, theirs) {
		if err := testkit.PushLikeHelm(client, base, "bench", "admin", admin.APIKey, big); err != nil {
			return nil, err
		}
	}

	// BigTags versions of one chart: on chartctl uploaded through /v1
	// (minimal charts, concurrently); on Distribution one pushed version
	// and its tag written BigTags times into its storage layout (what
	// Distribution's tags/list reads is that directory).
	logf("filling chart big/big with %d versions (this takes a while)", cfg.BigTags)
	if err := fillBig(ctx, bt, cfg.BigTags, logf); err != nil {
		return nil, err
	}
	bigOne, err := testkit.NewOCIChart("big", "1.0.0", ChartArchive("big", "1.0.0", 0))
	if err != nil {
		return nil, err
	}
	if theirs != "" {
		if err := testkit.PushLikeHelm(client, theirs, "big", "", "", bigOne); err != nil {
			return nil, err
		}
		if err := writeDistributionTags(droot, "big/big", bigOne.ManifestDigest, cfg.BigTags); err != nil {
			return nil, err
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
	paths := [][2]string{ // chartctl/Distribution path, static file path
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
	floor := &floorServer{files: map[string]floorFile{}}
	for i := range reads {
		r := &reads[i]
		r.paths = map[string]string{"chartctl": paths[i][0]}
		if theirs != "" && !r.helmOnly {
			r.paths["distribution"] = paths[i][0]
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
		if theirs != "" && (r.key == "manifest" || strings.Contains(r.key, "blob") || r.key == "tags-300") {
			// The bytes Distribution serves must be chartctl's for the
			// comparison to hold (tags and catalog pages differ in order
			// or in content, not in kind).
			_, dbody, err := get(ctx, client, theirs+paths[i][0], r.header)
			if err != nil {
				return nil, err
			}
			if r.key != "tags-300" && !bytes.Equal(dbody, body) {
				return nil, fmt.Errorf("GET %s: Distribution serves other bytes than chartctl", paths[i][0])
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
		floor.files[paths[i][1]] = floorFile{body: body, etag: resp.Header.Get("Etag")}
		row := &OCIRow{Key: r.key, Label: r.label, Bytes: len(body), Rates: map[string][]float64{}}
		res.Rows = append(res.Rows, row)
	}
	naddr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	ngx := &Nginx{Binary: cfg.NginxBinary, Dir: filepath.Join(dir, "nginx"), Root: www, Addr: naddr}
	if err := ngx.Start(ctx); err != nil {
		return nil, err
	}
	defer ngx.Stop()
	floorURL, err := floor.start()
	if err != nil {
		return nil, err
	}
	defer floor.stop()
	bases := map[string]string{"chartctl": ours, "distribution": theirs, "nginx": "http://" + naddr, "bare": floorURL}

	pushRows := []*OCIRow{
		{Key: "raw-push", Label: fmt.Sprintf("raw push (Helm's requests, no Helm process), %d per round", cfg.Pushes), Rates: map[string][]float64{}},
	}
	if cfg.Helm != "" {
		pushRows = append(pushRows, &OCIRow{Key: "helm-push", Label: fmt.Sprintf("`helm push`, %d per round", cfg.Pushes), Rates: map[string][]float64{}})
		if err := helmLogin(ctx, cfg.Helm, dir, addr, admin.APIKey); err != nil {
			return nil, err
		}
	}
	res.Rows = append(res.Rows, pushRows...)

	pushed := 0
	for round := range cfg.Rounds {
		logf("round %d of %d", round+1, cfg.Rounds)
		for i, r := range reads {
			for _, srv := range ociServers {
				p, ok := r.paths[srv]
				if !ok {
					continue
				}
				header := r.header
				if r.auth && srv == "chartctl" {
					header = append(slices.Clone(header), "Authorization: Bearer "+admin.APIKey)
				}
				rps, err := loadRPS(ctx, Load{Conns: cfg.Conns, Duration: cfg.Duration, NewRequest: getRequest(bases[srv]+p, header)})
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", r.key, srv, err)
				}
				res.Rows[i].Rates[srv] = append(res.Rows[i].Rates[srv], rps)
				logf("  %-14s %-12s %9.0f/s", r.key, srv, rps)
			}
		}
		for _, row := range pushRows {
			for _, srv := range []string{"chartctl", "distribution"} {
				if bases[srv] == "" {
					continue
				}
				charts := make([]*testkit.OCIChart, cfg.Pushes)
				for j := range charts {
					v := fmt.Sprintf("2.%d.%d", round, pushed+j)
					if charts[j], err = testkit.NewOCIChart("p"+row.Key[:1], v, ChartArchive("p"+row.Key[:1], v, 0)); err != nil {
						return nil, err
					}
				}
				repo := map[string]string{"raw-push": "rpush", "helm-push": "hpush"}[row.Key]
				start := time.Now()
				for _, c := range charts {
					if row.Key == "raw-push" {
						err = testkit.PushLikeHelm(client, bases[srv], repo, "admin", admin.APIKey, c)
					} else {
						err = helmPush(ctx, cfg.Helm, dir, c, strings.TrimPrefix(bases[srv], "http://")+"/"+repo)
					}
					if err != nil {
						return nil, fmt.Errorf("%s to %s: %w", row.Key, srv, err)
					}
				}
				rate := float64(len(charts)) / time.Since(start).Seconds()
				row.Rates[srv] = append(row.Rates[srv], rate)
				logf("  %-14s %-12s %9.1f pushes/s", row.Key, srv, rate)
			}
			pushed += cfg.Pushes
		}
	}
	res.LoadAfter = loadAvg()
	return res, nil
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

// writeDistributionTags writes tags 0..n-1 (bigTag) of repository name
// pointing to manifest d into Distribution's filesystem layout, as its
// tag service writes them (current/link and index/<alg>/<hex>/link).
func writeDistributionTags(root, name, d string, n int) error {
	alg, hex, _ := strings.Cut(d, ":")
	tags := filepath.Join(root, "docker", "registry", "v2", "repositories", filepath.FromSlash(name), "_manifests", "tags")
	for i := range n {
		dir := filepath.Join(tags, bigTag(i))
		for _, sub := range []string{filepath.Join(dir, "current"), filepath.Join(dir, "index", alg, hex)} {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(sub, "link"), []byte(d), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

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

// helmLogin logs helm (its registry config in dir) in to chartctl.
func helmLogin(ctx context.Context, helm, dir, addr, key string) error {
	cmd := exec.CommandContext(ctx, helm, "registry", "login", addr, "--username", "admin", "--password-stdin", "--plain-http")
	cmd.Env = helmEnv(dir)
	cmd.Stdin = strings.NewReader(key)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm registry login: %v: %s", err, out)
	}
	return nil
}

// helmPush runs `helm push` of c to oci://target over plain HTTP.
func helmPush(ctx context.Context, helm, dir string, c *testkit.OCIChart, target string) error {
	file := filepath.Join(dir, c.Name+"-"+strings.ReplaceAll(c.Tag, "_", "+")+".tgz")
	if err := os.WriteFile(file, c.Archive, 0o644); err != nil {
		return err
	}
	defer os.Remove(file)
	cmd := exec.CommandContext(ctx, helm, "push", file, "oci://"+target, "--plain-http")
	cmd.Env = helmEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm push: %v: %s", err, out)
	}
	return nil
}

// helmEnv keeps helm's configuration and caches in dir.
func helmEnv(dir string) []string {
	h := filepath.Join(dir, "helm")
	return append(os.Environ(), "HELM_CONFIG_HOME="+h, "HELM_CACHE_HOME="+h+"/cache", "HELM_DATA_HOME="+h+"/data",
		"HELM_REGISTRY_CONFIG="+h+"/registry.json")
}

// waitHTTP waits until u answers (any status), for ten seconds.
func waitHTTP(ctx context.Context, u string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("no answer within 10s")
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

// Markdown renders the results: medians over the rounds per server, and
// the ratios of chartctl to each other server.
func (r *OCIResults) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s on %s; %d rounds, interleaved (each operation on each server in turn); reads %v each on %d connections (Go load generator), pushes %d in a row, one client. Load average before %s, after %s (the machine is shared). %s; nginx from Debian (sendfile on).\n\n",
		r.Date.Format("2006-01-02 15:04 UTC"), fmt.Sprintf("%d CPUs (%s)", r.Machine.CPUs, r.Machine.CPUModel), r.Config.Rounds, r.Config.Duration, r.Config.Conns, r.Config.Pushes, r.LoadBefore, r.LoadAfter, r.DistributionInfo)
	fmt.Fprintf(&b, "Command: `%s`\n\n", r.Config.Command)
	b.WriteString("| operation | bytes | chartctl /s | Distribution /s | nginx /s | bare net/http /s | ÷ Distribution | ÷ bare | ÷ nginx |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		med := map[string]float64{}
		for _, s := range ociServers {
			if v := row.Rates[s]; len(v) > 0 {
				med[s] = median(v)
			}
		}
		cell := func(s string) string {
			v, ok := med[s]
			if !ok {
				return "–"
			}
			if v < 100 {
				return fmt.Sprintf("%.1f", v)
			}
			return fmt.Sprintf("%.0f", v)
		}
		ratioTo := func(s string) string {
			if _, ok := med[s]; !ok || med["chartctl"] == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f", stats.Ratio(med["chartctl"], med[s]))
		}
		bytesCell := "–"
		if row.Bytes > 0 {
			bytesCell = fmt.Sprint(row.Bytes)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Label, bytesCell, cell("chartctl"), cell("distribution"), cell("nginx"), cell("bare"),
			ratioTo("distribution"), ratioTo("bare"), ratioTo("nginx"))
	}
	b.WriteString("\nPer round (chartctl ÷ Distribution):")
	for _, row := range r.Rows {
		var parts []string
		for i := range row.Rates["chartctl"] {
			if i < len(row.Rates["distribution"]) {
				parts = append(parts, fmt.Sprintf("%.2f", stats.Ratio(row.Rates["chartctl"][i], row.Rates["distribution"][i])))
			}
		}
		fmt.Fprintf(&b, " %s %s;", row.Key, strings.Join(parts, "/"))
	}
	b.WriteString("\n")
	return b.String()
}

// JSON is the raw figures, for whoever reruns and compares.
func (r *OCIResults) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// nonEmpty returns the non-empty strings of ss.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// startDistribution starts Distribution's registry bin on a loopback port
// with filesystem storage under dir, and returns how to stop it, its base
// URL, its storage root and its version.
func startDistribution(ctx context.Context, bin, dir string) (stop func(), base, root, info string, err error) {
	addr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, "", "", "", err
	}
	root = filepath.Join(dir, "distribution")
	conf := filepath.Join(dir, "distribution.yml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", root, addr)), 0o644); err != nil {
		return nil, "", "", "", err
	}
	logf, err := os.Create(filepath.Join(dir, "distribution.log"))
	if err != nil {
		return nil, "", "", "", err
	}
	cmd := exec.Command(bin, "serve", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, "", "", "", fmt.Errorf("start distribution: %w", err)
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() }
	base = "http://" + addr
	if err := waitHTTP(ctx, base+"/v2/"); err != nil {
		stop()
		return nil, "", "", "", fmt.Errorf("distribution: %w", err)
	}
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err == nil {
		info = strings.TrimSpace(string(out))
	}
	return stop, base, root, info, nil
}
