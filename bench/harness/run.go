package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/chartctl/chartctl/bench/corpus"
	"github.com/chartctl/chartctl/bench/stats"
)

// Config says what to benchmark and how hard.
type Config struct {
	// N is the number of chart versions per upload set.
	N int
	// URL targets a running chartctl server (loopback only); empty starts
	// Binary on a fresh data directory.
	URL string
	// Token is the API key used with URL.
	Token string
	// Binary is the chartctl executable to start when URL is empty.
	Binary string
	// Repo is the repository to create and fill.
	Repo string
	// Duration is the length of each read-load run.
	Duration time.Duration
	// Conns is the number of connections of each read-load run.
	Conns int
	// UploadClients is the number of concurrent uploaders.
	UploadClients int
	// SearchQueries is the number of sequential search requests.
	SearchQueries int
	// Peer, when set, is another chart server (loopback only) to run the
	// same uploads and index loads against.
	Peer string
	// PeerToken, if set, is sent to the peer as a bearer token.
	PeerToken string
	// PeerUploadPath, PeerField and PeerIndexPath locate the peer's upload
	// endpoint, multipart field and index.
	PeerUploadPath, PeerField, PeerIndexPath string
	// PeerPID, if not 0, is the peer's process id, for its peak RSS.
	PeerPID int
	// KeepData keeps the started server's temporary directory.
	KeepData bool
	// Command is the command line that reproduces the run (for the report).
	Command string
	// Log receives progress lines (os.Stderr when nil).
	Log io.Writer
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if c.N < 1 || c.N > 100_000 {
		return fmt.Errorf("--n must be between 1 and 100000, got %d", c.N)
	}
	if c.Duration <= 0 || c.Duration > 10*time.Minute {
		return fmt.Errorf("--duration must be between 0 and 10m, got %v", c.Duration)
	}
	if c.Conns < 1 || c.Conns > 1024 {
		return fmt.Errorf("--conns must be between 1 and 1024, got %d", c.Conns)
	}
	if c.UploadClients < 1 || c.UploadClients > 256 {
		return fmt.Errorf("--upload-clients must be between 1 and 256, got %d", c.UploadClients)
	}
	if c.SearchQueries < 1 || c.SearchQueries > 100_000 {
		return fmt.Errorf("--search-queries must be between 1 and 100000, got %d", c.SearchQueries)
	}
	if c.URL != "" {
		if _, err := CheckLoopback(c.URL); err != nil {
			return fmt.Errorf("--url: %w", err)
		}
		if c.Token == "" {
			return errors.New("--url needs --token (or CHARTBENCH_TOKEN): an API key with repo:write")
		}
	} else if c.Binary == "" {
		return errors.New("--binary is required when --url is not given")
	}
	if c.Peer != "" {
		if _, err := CheckLoopback(c.Peer); err != nil {
			return fmt.Errorf("--peer: %w", err)
		}
		if c.PeerField == "" || c.PeerUploadPath == "" || c.PeerIndexPath == "" {
			return errors.New("--peer needs --peer-upload-path, --peer-field and --peer-index-path")
		}
	}
	if c.Repo == "" {
		c.Repo = "bench"
		if c.URL != "" {
			// A running server may already hold "bench" from an earlier run.
			c.Repo = "bench-" + time.Now().UTC().Format("20060102-150405")
		}
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	return nil
}

// Run performs the whole benchmark and returns its results.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "chartbench: "+format+"\n", args...) }

	logf("generating %d + %d chart archives", cfg.N, cfg.N)
	setA, err := corpus.Generate(cfg.N, 0)
	if err != nil {
		return nil, err
	}
	setB, err := corpus.Generate(cfg.N, 1)
	if err != nil {
		return nil, err
	}
	res := &Results{
		N: cfg.N, Date: time.Now().UTC(), Command: cfg.Command, Duration: cfg.Duration,
		Conns: cfg.Conns, UploadClients: cfg.UploadClients,
	}
	for _, c := range setA {
		res.CorpusBytes += int64(len(c.Archive))
	}

	target := Target{Name: "chartctl", Token: cfg.Token, Field: "chart"}
	var proc *Process
	if cfg.URL == "" {
		dir, err := os.MkdirTemp("", "chartbench-")
		if err != nil {
			return nil, fmt.Errorf("temp dir: %w", err)
		}
		if cfg.KeepData {
			logf("keeping %s", dir)
		} else {
			defer os.RemoveAll(dir)
		}
		addr, err := FreeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		proc = &Process{Binary: cfg.Binary, DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "server.log")}
		res.Machine = DescribeMachine(cfg.Binary)
		logf("starting %s %v", cfg.Binary, proc.Args())
		if err := proc.Start(); err != nil {
			return nil, err
		}
		defer func() { _, _ = proc.Stop() }()
		if res.StartEmpty, err = proc.WaitHealthy(ctx); err != nil {
			return nil, err
		}
		admin, err := ReadInitialAdmin(proc.DataDir)
		if err != nil {
			return nil, err
		}
		target.Token = admin.APIKey
		target.Base, _ = url.Parse("http://" + addr)
	} else {
		res.Machine = DescribeMachine("")
		target.Base, _ = CheckLoopback(cfg.URL)
	}
	target.UploadPath = "/v1/repositories/" + url.PathEscape(cfg.Repo) + "/charts"
	target.IndexPath = "/helm/" + url.PathEscape(cfg.Repo) + "/index.yaml"

	client := NewClient(1, time.Minute)
	defer client.CloseIdleConnections()
	if err := CreateRepository(ctx, client, target, cfg.Repo); err != nil {
		return nil, err
	}

	ours, err := runUploadsAndIndex(ctx, cfg, target, setA, setB, logf)
	res.Server = ours
	if err != nil {
		return res, err
	}

	// Authenticated API reads against the same server's /healthz.
	for _, l := range []struct {
		dst   **LoadResult
		label string
		path  string
		query url.Values
		auth  bool
	}{
		{&ours.Repos, "GET /v1/repositories", "/v1/repositories", nil, true},
		{&ours.Charts, "GET /v1/repositories/:repo/charts", "/v1/repositories/" + url.PathEscape(cfg.Repo) + "/charts", url.Values{"limit": {"100"}}, true},
		{&ours.Healthz, "GET /healthz", "/healthz", nil, false},
	} {
		logf("%s: %d connections for %v", l.label, cfg.Conns, cfg.Duration)
		r, err := runLoad(ctx, GetLoad(target, l.path, l.query, l.auth, nil, cfg.Conns, cfg.Duration))
		if err != nil {
			return res, fmt.Errorf("%s: %w", l.label, err)
		}
		*l.dst = r
	}

	logf("search: %d queries", cfg.SearchQueries)
	terms := searchTerms(setA)
	var lat []time.Duration
	for i := range cfg.SearchQueries {
		_, d, err := Fetch(ctx, client, target, "/v1/search", url.Values{"q": {terms[i%len(terms)]}}, true, nil)
		if err != nil {
			return res, fmt.Errorf("search: %w", err)
		}
		lat = append(lat, d)
	}
	s := stats.Summarize(lat)
	ours.Search = &s

	if proc != nil {
		if ours.PeakRSS, err = proc.PeakRSS(); err != nil {
			return res, err
		}
		logf("restarting the server with %d versions", 2*cfg.N)
		stop, err := proc.Stop()
		if err != nil {
			return res, err
		}
		res.StopTime = stop
		if err := proc.Start(); err != nil {
			return res, err
		}
		if res.Restart, err = proc.WaitHealthy(ctx); err != nil {
			return res, err
		}
		idx, d, err := Fetch(ctx, client, target, target.IndexPath, nil, false, nil)
		if err != nil {
			return res, fmt.Errorf("index after restart: %w", err)
		}
		res.FirstIndexAfterRestart = d
		res.VersionsAfterRestart = CountIndexVersions(idx)
		res.VersionsUploaded = 2 * cfg.N
	}

	if cfg.Peer != "" {
		base, _ := CheckLoopback(cfg.Peer)
		peer := Target{Name: "peer", Base: base, Token: cfg.PeerToken, UploadPath: cfg.PeerUploadPath, Field: cfg.PeerField, IndexPath: cfg.PeerIndexPath}
		res.PeerURL = base.String()
		logf("peer %s", base)
		theirs, err := runUploadsAndIndex(ctx, cfg, peer, setA, setB, logf)
		res.Peer = theirs
		if err != nil {
			return res, fmt.Errorf("peer: %w", err)
		}
		if cfg.PeerPID != 0 {
			if theirs.PeakRSS, err = peakRSS(cfg.PeerPID); err != nil {
				return res, fmt.Errorf("peer: %w", err)
			}
		}
	}
	return res, nil
}

// runUploadsAndIndex runs the measurements both servers share: sequential
// uploads of setA, index.yaml load with and without gzip, then concurrent
// uploads of setB.
func runUploadsAndIndex(ctx context.Context, cfg Config, t Target, setA, setB []corpus.Chart, logf func(string, ...any)) (*SuiteResult, error) {
	sr := &SuiteResult{Name: t.Name}
	client := NewClient(1, time.Minute)
	defer client.CloseIdleConnections()

	logf("%s: %d sequential uploads", t.Name, len(setA))
	step := max(len(setA)/10, 1)
	start := time.Now()
	lat, err := UploadSequential(ctx, client, t, setA, func(done int) {
		if done%step == 0 {
			logf("%s: %d/%d uploaded", t.Name, done, len(setA))
		}
	})
	if err != nil {
		return sr, err
	}
	sr.SeqWall = time.Since(start)
	sr.Seq = stats.Summarize(lat)
	sr.SeqHead, sr.SeqTail = stats.HeadTail(lat, 0.1)

	gz := http.Header{"Accept-Encoding": {"gzip"}}
	id := http.Header{"Accept-Encoding": {"identity"}}
	for _, l := range []struct {
		dst   **LoadResult
		label string
		hdr   http.Header
	}{
		{&sr.IndexGzip, "index.yaml, Accept-Encoding: gzip", gz},
		{&sr.IndexIdentity, "index.yaml, identity", id},
	} {
		logf("%s: %s: %d connections for %v", t.Name, l.label, cfg.Conns, cfg.Duration)
		r, err := runLoad(ctx, GetLoad(t, t.IndexPath, nil, false, l.hdr, cfg.Conns, cfg.Duration))
		if err != nil {
			return sr, fmt.Errorf("%s: %w", l.label, err)
		}
		*l.dst = r
	}
	if sr.IndexIdentity != nil {
		b, _, err := Fetch(ctx, client, t, t.IndexPath, nil, false, id)
		if err != nil {
			return sr, err
		}
		sr.IndexVersions = CountIndexVersions(b)
	}

	logf("%s: %d uploads from %d clients", t.Name, len(setB), cfg.UploadClients)
	elapsed, clat, err := UploadConcurrent(ctx, t, setB, cfg.UploadClients)
	if err != nil {
		return sr, err
	}
	sr.Conc = stats.Summarize(clat)
	sr.ConcWall = elapsed
	sr.ConcRate = stats.Rate(len(clat), elapsed)
	return sr, nil
}

// runLoad runs l on a fresh client and closes its connections afterwards.
func runLoad(ctx context.Context, l Load) (*LoadResult, error) {
	client := l.TLS.Trust(NewClient(l.Conns, 30*time.Second))
	defer client.CloseIdleConnections()
	r, err := l.Run(ctx, client)
	if err != nil {
		return nil, err
	}
	if r.Errors > 0 {
		return &r, fmt.Errorf("%d errors (first: %s)", r.Errors, r.FirstError)
	}
	return &r, nil
}

// searchTerms are the queries of the search run: chart name parts and
// keywords from the corpus, in a fixed order.
func searchTerms(charts []corpus.Chart) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range charts {
		for _, k := range c.Keywords {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
		if len(out) >= 64 {
			break
		}
	}
	return out
}
