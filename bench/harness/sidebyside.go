package harness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
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
)

// SideConfig configures the side-by-side bench of issue #19: chartctl's
// read routes against nginx serving the very bytes chartctl served.
type SideConfig struct {
	// N is the number of chart versions in the public repository (the
	// private one holds the same).
	N int
	// Binary is the chartctl executable to start.
	Binary string
	// NginxBinary and WrkBinary locate the tools (PATH when empty).
	NginxBinary, WrkBinary string
	// Load is "wrk" (default) or "go", the built-in generator.
	Load string
	// Rounds is how many interleaved rounds to run; each measures every
	// route once on each server.
	Rounds int
	// Duration is the length of one measurement.
	Duration time.Duration
	// Threads and Conns shape the load (wrk's -t and -c).
	Threads, Conns int
	// ProfileDir, when set, receives a CPU profile and allocation
	// profiles of chartctl for every route, taken in an extra round
	// before the measured ones (so profiling does not slow them).
	ProfileDir string
	// KeepData keeps the temporary directory.
	KeepData bool
	// Command reproduces the run, for the report.
	Command string
	// Log receives progress lines (os.Stderr when nil).
	Log io.Writer
}

// Validate checks the configuration and fills defaults.
func (c *SideConfig) Validate() error {
	if c.N < 1 || c.N > 100_000 {
		return fmt.Errorf("--n must be between 1 and 100000, got %d", c.N)
	}
	if c.Binary == "" {
		return errors.New("--binary is required")
	}
	if c.Load == "" {
		c.Load = "wrk"
	}
	if c.Load != "wrk" && c.Load != "go" {
		return fmt.Errorf("--load must be wrk or go, got %q", c.Load)
	}
	if c.Rounds < 1 || c.Rounds > 100 {
		return fmt.Errorf("--rounds must be between 1 and 100, got %d", c.Rounds)
	}
	if c.Duration < time.Second || c.Duration > 5*time.Minute {
		return fmt.Errorf("--duration must be between 1s and 5m, got %v", c.Duration)
	}
	if c.Conns < 1 || c.Conns > 1024 || c.Threads < 1 || c.Threads > c.Conns {
		return fmt.Errorf("--conns must be 1..1024 and --threads 1..conns, got %d and %d", c.Conns, c.Threads)
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	return nil
}

// SideRoute is one route of the side-by-side bench.
type SideRoute struct {
	// Key names the route in profiles and logs; Label in the report.
	Key, Label string
	// Path and Header are the chartctl request.
	Path   string
	Header []string
	// Static is true when nginx serves the same request (same path; the
	// header NginxHeader, which differs only in the ETag nginx made).
	Static      bool
	NginxHeader []string
	// Versus, when not Static, is the Key of the chartctl route this one
	// is compared with (an authenticated read with its public twin).
	Versus string
	// Status is the expected status.
	Status int
	// Target is the ratio issue #19 asks for.
	Target float64
}

// SideResult is one route's measurements over the rounds.
type SideResult struct {
	Route SideRoute
	// Ours and Theirs are req/s per round (Theirs: nginx, or the Versus
	// route of chartctl).
	Ours, Theirs []float64
	// Ratios are Ours/Theirs per round.
	Ratios []float64
	// Floor is req/s per round of a bare net/http handler serving the
	// same bytes from memory (static routes only); FloorRatios are
	// Ours/Floor.
	Floor, FloorRatios []float64
	// BodyBytes is the response body size.
	BodyBytes int
}

// SideResults is a whole side-by-side run.
type SideResults struct {
	Config  SideConfig
	Date    time.Time
	Machine Machine
	Nginx   string
	Loader  string
	Routes  []*SideResult
	// IndexBytes and IndexGzipBytes are the sizes of index.yaml.
	IndexBytes, IndexGzipBytes int
}

// provFile is a provenance file of the shape `helm package --sign` makes
// (its bytes only matter as bytes: both servers serve them verbatim).
func provFile(c corpus.Chart) []byte {
	var b strings.Builder
	b.WriteString("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n")
	fmt.Fprintf(&b, "apiVersion: v2\ndescription: %s\nname: %s\nversion: %s\n\n...\nfiles:\n  %s: sha256:%064x\n", c.Description, c.Name, c.Version, c.Filename(), len(c.Archive))
	b.WriteString("-----BEGIN PGP SIGNATURE-----\n\n")
	line := strings.Repeat("wsBcBAEBCgAQBQJnabcdCRBHcPp0vE1oRwAAkW0IAJ", 2)[:64]
	for range 10 {
		b.WriteString(line + "\n")
	}
	b.WriteString("=Xq1v\n-----END PGP SIGNATURE-----\n")
	return []byte(b.String())
}

// ociManifestAccept is the Accept header Helm sends for a chart's
// manifest.
const ociManifestAccept = "application/vnd.oci.image.manifest.v1+json"

// sha256Digest is the OCI digest of b.
func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// uploadWithProv uploads c with its provenance file through /v1.
func uploadWithProv(ctx context.Context, client *http.Client, t Target, c corpus.Chart, prov []byte) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, part := range []struct {
		field, name string
		data        []byte
	}{{"chart", c.Filename(), c.Archive}, {"prov", c.Filename() + ".prov", prov}} {
		fw, err := mw.CreateFormFile(part.field, part.name)
		if err != nil {
			return err
		}
		if _, err := fw.Write(part.data); err != nil {
			return err
		}
	}
	if err := mw.Close(); err != nil {
		return err
	}
	req, err := t.NewRequest(ctx, http.MethodPost, t.UploadPath, nil, &buf, true)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("upload %s: %w", c.Filename(), err)
	}
	defer resp.Body.Close()
	return checkStatus(resp)
}

// createRepo creates a repository of the given visibility.
func createRepo(ctx context.Context, client *http.Client, t Target, name, visibility string) error {
	req, err := t.NewRequest(ctx, http.MethodPost, "/v1/repositories", nil, strings.NewReader(`{"name":"`+name+`","visibility":"`+visibility+`"}`), true)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("create repository %s: %w", name, err)
	}
	defer resp.Body.Close()
	return checkStatus(resp)
}

// get performs one request and returns the response with its body read.
func get(ctx context.Context, client *http.Client, rawURL string, header []string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, h := range header {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// RunSideBySide fills chartctl, copies what it serves into nginx's
// document root, and measures every route in interleaved rounds.
func RunSideBySide(ctx context.Context, cfg SideConfig) (*SideResults, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "chartbench: "+format+"\n", args...) }
	res := &SideResults{Config: cfg, Date: time.Now().UTC(), Machine: DescribeMachine(cfg.Binary), Loader: cfg.Load}

	dir, err := os.MkdirTemp("", "chartbench-side-")
	if err != nil {
		return nil, err
	}
	if cfg.KeepData {
		logf("keeping %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}

	charts, err := corpus.Generate(cfg.N, 0)
	if err != nil {
		return nil, err
	}
	addr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	proc := &Process{Binary: cfg.Binary, DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "server.log")}
	var debugAddr string
	if cfg.ProfileDir != "" {
		if debugAddr, err = FreeLoopbackAddr(); err != nil {
			return nil, err
		}
		proc.Extra = []string{"--debug-addr", debugAddr}
	}
	logf("starting %s %v", cfg.Binary, proc.Args())
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
	base, _ := url.Parse("http://" + addr)
	client := NewClient(4, time.Minute)
	defer client.CloseIdleConnections()

	first := charts[0]
	prov := provFile(first)
	for _, repo := range []struct{ name, visibility string }{{"bench", "public"}, {"private", "private"}} {
		t := Target{Name: "chartctl", Base: base, Token: admin.APIKey, Field: "chart", UploadPath: "/v1/repositories/" + repo.name + "/charts"}
		if err := createRepo(ctx, client, t, repo.name, repo.visibility); err != nil {
			return nil, err
		}
		logf("uploading %d versions to %s (%s)", len(charts), repo.name, repo.visibility)
		if err := uploadWithProv(ctx, client, t, first, prov); err != nil {
			return nil, err
		}
		if _, _, err := UploadConcurrent(ctx, t, charts[1:], 4); err != nil {
			return nil, err
		}
	}

	// The very bytes chartctl serves become nginx's files.
	www := filepath.Join(dir, "www")
	pub := "/helm/bench/"
	tgz := "charts/" + first.Filename()
	// The same chart pulled over OCI, as `helm pull oci://` does: the
	// manifest by tag (its version), then the chart layer by digest.
	ociName := "/v2/bench/" + first.Name
	ociManifest := ociName + "/manifests/" + strings.ReplaceAll(first.Version, "+", "_")
	ociBlob := ociName + "/blobs/" + sha256Digest(first.Archive)
	files := []struct {
		path   string
		header []string
		gzip   bool
	}{
		{pub + "index.yaml", nil, false},
		{pub + "index.yaml.gz", []string{"Accept-Encoding: gzip"}, true},
		{pub + tgz, nil, false},
		{pub + tgz + ".prov", nil, false},
		{ociManifest, []string{"Accept: " + ociManifestAccept}, false},
		{ociBlob, nil, false},
	}
	served := map[string][]byte{}
	for _, f := range files {
		src := strings.TrimSuffix(f.path, ".gz")
		resp, body, err := get(ctx, client, base.String()+src, f.header)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK || (f.gzip != (resp.Header.Get("Content-Encoding") == "gzip")) {
			return nil, fmt.Errorf("GET %s: status %d, Content-Encoding %q", src, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
		p := filepath.Join(www, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return nil, err
		}
		served[f.path] = body
	}
	res.IndexBytes, res.IndexGzipBytes = len(served[pub+"index.yaml"]), len(served[pub+"index.yaml.gz"])

	nginxAddr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	ngx := &Nginx{Binary: cfg.NginxBinary, Dir: filepath.Join(dir, "nginx"), Root: www, Addr: nginxAddr}
	logf("starting nginx on %s", nginxAddr)
	if err := ngx.Start(ctx); err != nil {
		return nil, err
	}
	defer ngx.Stop()
	res.Nginx = nginxVersion(cfg.NginxBinary)
	nbase := "http://" + nginxAddr

	gz := "Accept-Encoding: gzip"
	resp, _, err := get(ctx, client, base.String()+pub+"index.yaml", []string{gz})
	if err != nil {
		return nil, err
	}
	etag := resp.Header.Get("ETag")
	resp, _, err = get(ctx, client, nbase+pub+"index.yaml", []string{gz})
	if err != nil {
		return nil, err
	}
	nginxETag := resp.Header.Get("ETag")
	floor := &floorServer{files: map[string]floorFile{
		pub + "index.yaml":  {body: served[pub+"index.yaml"], gz: served[pub+"index.yaml.gz"], etag: etag},
		pub + tgz:           {body: served[pub+tgz], etag: `"floor-tgz"`},
		pub + tgz + ".prov": {body: served[pub+tgz+".prov"], etag: `"floor-prov"`},
		ociManifest:         {body: served[ociManifest], etag: `"floor-manifest"`},
		ociBlob:             {body: served[ociBlob], etag: `"floor-blob"`},
	}}
	fbase, err := floor.start()
	if err != nil {
		return nil, err
	}
	defer floor.stop()
	basic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x:"+admin.APIKey))
	bearer := "Authorization: Bearer " + admin.APIKey
	routes := []SideRoute{
		{Key: "index-gzip", Label: "`index.yaml`, gzip accepted", Path: pub + "index.yaml", Header: []string{gz}, Static: true, Status: 200, Target: 0.8},
		{Key: "index-identity", Label: "`index.yaml`, identity", Path: pub + "index.yaml", Static: true, Status: 200, Target: 0.8},
		{Key: "index-304", Label: "`index.yaml`, `If-None-Match` → 304", Path: pub + "index.yaml", Header: []string{gz, "If-None-Match: " + etag}, NginxHeader: []string{gz, "If-None-Match: " + nginxETag}, Static: true, Status: 304, Target: 0.8},
		{Key: "tgz", Label: "`charts/" + first.Filename() + "`", Path: pub + tgz, Static: true, Status: 200, Target: 0.8},
		{Key: "prov", Label: "`charts/" + first.Filename() + ".prov`", Path: pub + tgz + ".prov", Static: true, Status: 200, Target: 0.8},
		{Key: "oci-manifest", Label: "OCI manifest `" + strings.TrimPrefix(ociManifest, "/v2/") + "`", Path: ociManifest, Header: []string{"Accept: " + ociManifestAccept}, Static: true, Status: 200, Target: 0.8},
		{Key: "oci-blob", Label: "OCI blob (the chart layer) `" + strings.TrimPrefix(ociName, "/v2/") + "/blobs/sha256:…`", Path: ociBlob, Static: true, Status: 200, Target: 0.8},
		{Key: "private-index", Label: "private `index.yaml`, gzip, API key (Basic)", Path: "/helm/private/index.yaml", Header: []string{gz, basic}, Versus: "index-gzip", Status: 200, Target: 0.7},
		{Key: "private-tgz", Label: "private `charts/*.tgz`, API key (Basic)", Path: "/helm/private/" + tgz, Header: []string{basic}, Versus: "tgz", Status: 200, Target: 0.7},
		{Key: "v1-archive", Label: "`/v1/…/archive`, API key (Bearer)", Path: "/v1/repositories/bench/charts/" + first.Name + "/" + first.Version + "/archive", Header: []string{bearer}, Versus: "tgz", Status: 200, Target: 0.7},
		{Key: "healthz", Label: "`/healthz`", Path: "/healthz", Status: 200},
		{Key: "v1-repositories", Label: "`/v1/repositories`, API key (Bearer)", Path: "/v1/repositories", Header: []string{bearer}, Versus: "healthz", Status: 200, Target: 0.8},
	}
	for i := range routes {
		r := &routes[i]
		if r.Static && r.NginxHeader == nil {
			r.NginxHeader = r.Header
		}
		resp, body, err := get(ctx, client, base.String()+r.Path, r.Header)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != r.Status {
			return nil, fmt.Errorf("chartctl %s: status %d, want %d", r.Path, resp.StatusCode, r.Status)
		}
		sr := &SideResult{Route: *r, BodyBytes: len(body)}
		if r.Static {
			nresp, nbody, err := get(ctx, client, nbase+r.Path, r.NginxHeader)
			if err != nil {
				return nil, err
			}
			if nresp.StatusCode != r.Status || !bytes.Equal(nbody, body) {
				return nil, fmt.Errorf("nginx %s: status %d (want %d), %d bytes (chartctl: %d): not the same response", r.Path, nresp.StatusCode, r.Status, len(nbody), len(body))
			}
		}
		res.Routes = append(res.Routes, sr)
	}

	load := func(ctx context.Context, rawURL string, header []string) (float64, error) {
		if cfg.Load == "go" {
			u, _ := url.Parse(rawURL)
			l := Load{Conns: cfg.Conns, Duration: cfg.Duration, NewRequest: func(ctx context.Context) (*http.Request, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
				for _, h := range header {
					k, v, _ := strings.Cut(h, ":")
					req.Header.Set(k, strings.TrimSpace(v))
				}
				return req, err
			}}
			return loadRPS(ctx, l)
		}
		w := Wrk{Binary: cfg.WrkBinary, Threads: cfg.Threads, Conns: cfg.Conns, Duration: cfg.Duration}
		r, err := w.Run(ctx, rawURL, header)
		if err != nil {
			return 0, err
		}
		if r.Errors > 0 {
			return 0, fmt.Errorf("%s: %d errors:\n%s", rawURL, r.Errors, r.Output)
		}
		return r.RPS, nil
	}

	if cfg.ProfileDir != "" {
		if err := profileRoutes(ctx, cfg, debugAddr, base.String(), res.Routes, load, logf); err != nil {
			return nil, err
		}
	}

	ours := map[string]float64{}
	for round := range cfg.Rounds {
		logf("round %d/%d", round+1, cfg.Rounds)
		for _, sr := range res.Routes {
			r := sr.Route
			run := []func() error{
				func() error {
					v, err := load(ctx, base.String()+r.Path, r.Header)
					ours[r.Key] = v
					sr.Ours = append(sr.Ours, v)
					return err
				},
			}
			if r.Static {
				run = append(run, func() error {
					v, err := load(ctx, fbase+r.Path, r.Header)
					sr.Floor = append(sr.Floor, v)
					return err
				})
				nginx := func() error {
					v, err := load(ctx, nbase+r.Path, r.NginxHeader)
					sr.Theirs = append(sr.Theirs, v)
					return err
				}
				// Alternate which server goes first, so a drift in the
				// machine's load does not favour one side.
				if round%2 == 0 {
					run = append(run, nginx)
				} else {
					run = append([]func() error{nginx}, run...)
				}
			}
			for _, f := range run {
				if err := f(); err != nil {
					return res, fmt.Errorf("%s: %w", r.Key, err)
				}
			}
			if r.Static {
				sr.Ratios = append(sr.Ratios, stats.Ratio(sr.Ours[round], sr.Theirs[round]))
				sr.FloorRatios = append(sr.FloorRatios, stats.Ratio(sr.Ours[round], sr.Floor[round]))
			}
			logf("  %-16s chartctl %8.0f/s%s", r.Key, sr.Ours[round], nginxNote(sr, round))
		}
		// Authenticated routes compare with their public twin of the
		// same round.
		for _, sr := range res.Routes {
			if v := sr.Route.Versus; v != "" {
				sr.Theirs = append(sr.Theirs, ours[v])
				sr.Ratios = append(sr.Ratios, stats.Ratio(ours[sr.Route.Key], ours[v]))
			}
		}
	}
	return res, nil
}

func nginxNote(sr *SideResult, round int) string {
	if !sr.Route.Static {
		return ""
	}
	return fmt.Sprintf("   nginx %8.0f/s   ratio %.2f   bare net/http %8.0f/s", sr.Theirs[round], stats.Ratio(sr.Ours[round], sr.Theirs[round]), sr.Floor[round])
}

// loadRPS runs a Go load and returns its rate.
func loadRPS(ctx context.Context, l Load) (float64, error) {
	r, err := runLoad(ctx, l)
	if err != nil {
		return 0, err
	}
	return r.RPS, nil
}

// profileRoutes loads every chartctl route once while taking a CPU
// profile of it, and the allocation profile before and after, into
// cfg.ProfileDir (compare with `go tool pprof -base ROUTE.allocs-before
// ROUTE.allocs-after`).
func profileRoutes(ctx context.Context, cfg SideConfig, debugAddr, base string, routes []*SideResult, load func(context.Context, string, []string) (float64, error), logf func(string, ...any)) error {
	if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
		return err
	}
	client := NewClient(2, time.Minute)
	defer client.CloseIdleConnections()
	save := func(path, name string) error {
		resp, body, err := get(ctx, client, "http://"+debugAddr+path, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
		}
		return os.WriteFile(filepath.Join(cfg.ProfileDir, name), body, 0o644)
	}
	secs := max(int(cfg.Duration/time.Second)-1, 1)
	for _, sr := range routes {
		r := sr.Route
		logf("profiling %s", r.Key)
		if err := save("/debug/pprof/allocs", r.Key+".allocs-before"); err != nil {
			return err
		}
		done := make(chan error, 1)
		var rps float64
		go func() {
			var err error
			rps, err = load(ctx, base+r.Path, r.Header)
			done <- err
		}()
		time.Sleep(500 * time.Millisecond)
		perr := save(fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), r.Key+".cpu")
		if err := <-done; err != nil {
			return err
		}
		if perr != nil {
			return perr
		}
		if err := save("/debug/pprof/allocs", r.Key+".allocs-after"); err != nil {
			return err
		}
		logf("  %s: %.0f/s while profiled", r.Key, rps)
	}
	return nil
}

func nginxVersion(bin string) string {
	if bin == "" {
		bin = "nginx"
	}
	// nginx -v prints "nginx version: nginx/1.22.1" on stderr.
	out, err := exec.Command(bin, "-v").CombinedOutput()
	if err != nil {
		return "nginx"
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "nginx version:"))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Markdown renders the side-by-side table.
func (r *SideResults) Markdown() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "### chartctl beside nginx, %s versions (%s)\n\n", thousands(c.N), r.Date.Format("2006-01-02"))
	fmt.Fprintf(&b, "- Date: %s\n", r.Date.Format(time.RFC3339))
	m := r.Machine
	fmt.Fprintf(&b, "- Machine: %d CPUs", m.CPUs)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, " (%s)", m.CPUModel)
	}
	if m.MemTotal > 0 {
		fmt.Fprintf(&b, ", %.1f GiB memory", float64(m.MemTotal)/(1<<30))
	}
	fmt.Fprintf(&b, ", %s, kernel %s; chartctl built with %s\n", m.OS, m.Kernel, m.ServerGo)
	fmt.Fprintf(&b, "- nginx %s: `worker_processes auto; sendfile on; tcp_nopush on; access_log off; gzip_static on`, serving the bytes chartctl had just served (`index.yaml` %s, gzip %s)\n", r.Nginx, kib(int64(r.IndexBytes)), kib(int64(r.IndexGzipBytes)))
	loader := fmt.Sprintf("wrk, %d threads, %d connections", c.Threads, c.Conns)
	if r.Loader == "go" {
		loader = fmt.Sprintf("the built-in Go generator, %d connections", c.Conns)
	}
	fmt.Fprintf(&b, "- Load: %s, %v per measurement; %d interleaved rounds (the server measured first alternates; the machine is shared with other work, so single measurements are noisy); figures are medians over the rounds, the ratio the median of each round's ratio\n", loader, c.Duration, c.Rounds)
	fmt.Fprintf(&b, "- Reproduce: `%s`\n\n", c.Command)
	b.WriteString("| Route | chartctl req/s | compared with | its req/s | ratio | target | bare net/http req/s | chartctl / bare |\n|---|---:|---|---:|---:|---|---:|---:|\n")
	for _, sr := range r.Routes {
		rt := sr.Route
		if rt.Static {
			fmt.Fprintf(&b, "| %s | %s | nginx, same bytes | %s | %.2f | %s | %s | %.2f |\n", rt.Label, rate(median(sr.Ours)), rate(median(sr.Theirs)), median(sr.Ratios), verdictRatio(median(sr.Ratios), rt.Target), rate(median(sr.Floor)), median(sr.FloorRatios))
		} else if rt.Versus != "" {
			fmt.Fprintf(&b, "| %s | %s | chartctl %s | %s | %.2f | %s | | |\n", rt.Label, rate(median(sr.Ours)), rt.Versus, rate(median(sr.Theirs)), median(sr.Ratios), verdictRatio(median(sr.Ratios), rt.Target))
		} else {
			fmt.Fprintf(&b, "| %s | %s | | | | | | |\n", rt.Label, rate(median(sr.Ours)))
		}
	}
	b.WriteString("\n\"bare net/http\" is a handler of a few lines in the harness serving the same bytes from memory with no router, middleware, logging, metrics or lookups: the most a Go server can do here. chartctl / bare is what chartctl's own code leaves of it; nginx / bare is what Go's HTTP server leaves of nginx.\n")
	b.WriteString("\nPer round (chartctl / other, req/s):\n\n")
	for _, sr := range r.Routes {
		if len(sr.Theirs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s:", sr.Route.Key)
		for i := range sr.Ours {
			fmt.Fprintf(&b, " %.0f/%.0f", sr.Ours[i], sr.Theirs[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func verdictRatio(v, target float64) string {
	if target == 0 {
		return ""
	}
	t := strings.TrimSuffix(fmt.Sprintf("%.2f", target), "0") // 0.45, 0.8, 2.0
	if v >= target {
		return "≥ " + t + ": met"
	}
	return "≥ " + t + ": **missed**"
}
