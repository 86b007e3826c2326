package harness

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func smallConfig() Config {
	return Config{
		N: 20, Duration: 150 * time.Millisecond, Conns: 4, UploadClients: 3, SearchQueries: 5,
		Command: "go run ./bench/cmd/chartbench --n 20", Log: io.Discard,
	}
}

// Against running servers (--url and --peer): every measurement is filled
// and the report shows both columns.
func TestRunAgainstURLAndPeer(t *testing.T) {
	ours := httptest.NewServer(newFakeServer(t.TempDir(), "chartctl_k"))
	defer ours.Close()
	peer := httptest.NewServer(newFakeServer(t.TempDir(), "unused"))
	defer peer.Close()

	cfg := smallConfig()
	cfg.URL, cfg.Token = ours.URL, "chartctl_k"
	cfg.Peer, cfg.PeerUploadPath, cfg.PeerField, cfg.PeerIndexPath = peer.URL, "/api/charts", "chart", "/index.yaml"
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*SuiteResult{res.Server, res.Peer} {
		if s.Seq.Count != 20 || s.Conc.Count != 20 || s.IndexVersions != 20 {
			t.Fatalf("%s: seq %d conc %d index %d", s.Name, s.Seq.Count, s.Conc.Count, s.IndexVersions)
		}
		if s.IndexGzip == nil || s.IndexGzip.Requests == 0 || s.IndexGzip.Encoding != "gzip" {
			t.Fatalf("%s: gzip load %+v", s.Name, s.IndexGzip)
		}
		if s.IndexIdentity == nil || s.IndexIdentity.Encoding != "identity" || s.IndexIdentity.BodyBytes <= s.IndexGzip.BodyBytes {
			t.Fatalf("%s: identity load %+v vs gzip %+v", s.Name, s.IndexIdentity, s.IndexGzip)
		}
	}
	s := res.Server
	if s.Repos.Requests == 0 || s.Charts.Requests == 0 || s.Healthz.Requests == 0 || s.Search.Count != 5 {
		t.Fatalf("API loads: %+v %+v %+v %+v", s.Repos, s.Charts, s.Healthz, s.Search)
	}
	if res.Restart != 0 || s.PeakRSS != 0 {
		t.Fatal("restart or RSS measured on a server the harness did not start")
	}
	md := res.Markdown()
	for _, want := range []string{
		"| Measure | chartctl | peer | chartctl advantage |",
		"| 20 sequential uploads, total (keep-alive) |",
		"`index.yaml`, gzip accepted, req/s",
		"(gzip) |", "(identity) |",
		"Authenticated `GET /v1/repositories`, req/s",
		"Reproduce: `go run ./bench/cmd/chartbench --n 20`",
		"#### Targets (issue #8)", "Compared with the peer measured in this run.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// Starting the server: the test binary plays chartctl (TestMain), so start,
// health, the admin key file, peak RSS, SIGTERM and restart are real.
func TestRunStartsServer(t *testing.T) {
	t.Setenv(fakeEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := smallConfig()
	cfg.Binary = exe
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.StartEmpty <= 0 || res.Restart <= 0 || res.FirstIndexAfterRestart <= 0 {
		t.Fatalf("start %v restart %v first index %v", res.StartEmpty, res.Restart, res.FirstIndexAfterRestart)
	}
	if res.VersionsUploaded != 40 || res.VersionsAfterRestart != 40 {
		t.Fatalf("versions after restart %d of %d", res.VersionsAfterRestart, res.VersionsUploaded)
	}
	if res.Server.PeakRSS < 1<<20 {
		t.Fatalf("peak RSS %d", res.Server.PeakRSS)
	}
	if res.Machine.CPUs < 1 || res.Machine.GoVersion == "" {
		t.Fatalf("machine %+v", res.Machine)
	}
	md := res.Markdown()
	for _, want := range []string{
		"| Restart to healthy with 40 versions |",
		"| Versions in `index.yaml` after restart / acknowledged | 40 / 40 |",
		"| Every acknowledged upload survives a restart | 40 / 40 | met |",
		"target is for 10,000",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestRunReportsAServerThatExits(t *testing.T) {
	cfg := smallConfig()
	cfg.Binary = filepath.Join(t.TempDir(), "missing-chartctl")
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Fatal("missing binary not reported")
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.N = 0 },
		func(c *Config) { c.Duration = 0 },
		func(c *Config) { c.Conns = 0 },
		func(c *Config) { c.URL = "http://192.0.2.1:8080"; c.Token = "k" },
		func(c *Config) { c.URL = "http://127.0.0.1:8080" }, // no token
		func(c *Config) { c.Binary = "" },
		func(c *Config) { c.Peer = "http://example.com" },
		func(c *Config) { c.Peer = "http://127.0.0.1:1" }, // no peer paths
	}
	for i, mutate := range bad {
		c := smallConfig()
		c.Binary = "./bin/chartctl"
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
	c := smallConfig()
	c.URL, c.Token = "http://[::1]:8080", "k"
	if err := c.Validate(); err != nil || !strings.HasPrefix(c.Repo, "bench-") {
		t.Fatalf("valid --url config: %v, repo %q", err, c.Repo)
	}
}

func TestWriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.md")
	if err := WriteSection(path, "n=1000", "first run\n"); err != nil {
		t.Fatal(err)
	}
	if err := WriteSection(path, "n=10000", "big run"); err != nil {
		t.Fatal(err)
	}
	if err := WriteSection(path, "n=1000", "second run"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Performance\n\n" +
		"<!-- chartbench:begin n=1000 -->\nsecond run\n<!-- chartbench:end n=1000 -->\n\n" +
		"<!-- chartbench:begin n=10000 -->\nbig run\n<!-- chartbench:end n=10000 -->\n"
	if string(b) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", b, want)
	}

	// Hand-written prose around the section is kept.
	doc := "# Performance\n\nNotes by hand.\n\n<!-- chartbench:begin n=5 -->\nold\n<!-- chartbench:end n=5 -->\n\n## Profiles\n\nMore notes.\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSection(path, "n=5", "new"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if string(b) != strings.Replace(doc, "\nold\n", "\nnew\n", 1) {
		t.Fatalf("prose not kept:\n%s", b)
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tchartctl\nVmPeak:\t  800000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40000 kB\n"
	n, err := parseStatusKB([]byte(status), "VmHWM")
	if err != nil || n != 51200*1024 {
		t.Fatalf("VmHWM = %d, %v", n, err)
	}
	if _, err := parseStatusKB([]byte(status), "VmSwap"); err == nil {
		t.Fatal("missing key not reported")
	}
	if _, err := parseStatusKB([]byte("VmHWM: lots kB\n"), "VmHWM"); err == nil {
		t.Fatal("bad number accepted")
	}
}

func TestFormatting(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %q", in, got)
		}
	}
	for in, want := range map[time.Duration]string{
		0: "", 420 * time.Microsecond: "420 µs", 4200 * time.Microsecond: "4.20 ms",
		42 * time.Millisecond: "42.0 ms", 4200 * time.Millisecond: "4.20 s", 90 * time.Second: "90 s",
	} {
		if got := dur(in); got != want {
			t.Errorf("dur(%v) = %q, want %q", in, got, want)
		}
	}
	if times(10, 4) != "2.50×" || times(0, 4) != "" || rate(4700.2) != "4,700/s" || rate(12.34) != "12.3/s" {
		t.Error("times/rate formatting")
	}
}
