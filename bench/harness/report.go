package harness

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/chartctl/chartctl/bench/stats"
)

// Results is everything one run measured.
type Results struct {
	// N is the size of each upload set.
	N int
	// CorpusBytes is the total size of the first set's archives.
	CorpusBytes int64
	// Date is when the run started (UTC).
	Date time.Time
	// Command reproduces the run.
	Command string
	// Machine describes where it ran.
	Machine Machine
	// Duration, Conns and UploadClients echo the load settings.
	Duration      time.Duration
	Conns         int
	UploadClients int

	// Server holds chartctl's measurements.
	Server *SuiteResult
	// Peer holds the peer's, when --peer was given.
	Peer *SuiteResult
	// PeerURL is the peer's base URL.
	PeerURL string

	// StartEmpty is the time from process start to /healthz 200 on an
	// empty data directory (0 when the harness did not start the server).
	StartEmpty time.Duration
	// StopTime is how long the graceful SIGTERM stop took.
	StopTime time.Duration
	// Restart is the time from process start to /healthz 200 with every
	// uploaded version stored.
	Restart time.Duration
	// FirstIndexAfterRestart is the latency of the first index.yaml after
	// the restart (a lazily rendered index shows its render time here).
	FirstIndexAfterRestart time.Duration
	// VersionsUploaded and VersionsAfterRestart compare what was
	// acknowledged with what the index lists after the restart.
	VersionsUploaded, VersionsAfterRestart int
}

// SuiteResult holds one server's measurements.
type SuiteResult struct {
	// Name labels the server.
	Name string
	// Seq summarizes sequential upload latencies; SeqHead and SeqTail are
	// the medians of the first and last 10 %; SeqWall is the wall time.
	Seq              stats.Summary
	SeqHead, SeqTail time.Duration
	SeqWall          time.Duration
	// Conc summarizes the concurrent uploads; ConcRate is uploads/s.
	Conc     stats.Summary
	ConcWall time.Duration
	ConcRate float64
	// IndexGzip and IndexIdentity are the index.yaml load runs.
	IndexGzip, IndexIdentity *LoadResult
	// IndexVersions is how many versions the index listed after the
	// sequential uploads.
	IndexVersions int
	// Repos, Charts and Healthz are the API load runs (chartctl only).
	Repos, Charts, Healthz *LoadResult
	// Search summarizes search latencies (chartctl only).
	Search *stats.Summary
	// PeakRSS is the server's VmHWM in bytes (0 when unknown).
	PeakRSS int64
}

// Machine describes the host of a run.
type Machine struct {
	CPUs      int
	CPUModel  string
	MemTotal  int64
	OS        string
	Kernel    string
	GoVersion string
	// ServerGo is the Go version the chartctl binary was built with.
	ServerGo string
}

// DescribeMachine reads the host's description from /proc and the server
// binary's build information (binary may be empty).
func DescribeMachine(binary string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemTotal, _ = parseStatusKB(b, "MemTotal")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`) + " (" + m.OS + ")"
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if binary != "" {
		if bi, err := buildinfo.ReadFile(binary); err == nil {
			m.ServerGo = bi.GoVersion
		}
	}
	return m
}

// Reference holds ChartMuseum's figures as issue #8 reports them for a
// 2-core machine; they stand in for a peer measured in the same run.
type Reference struct {
	SeqTotal    time.Duration
	Growth      float64
	IndexRPS    float64
	PeakRSSMiB  float64
	StartTime   time.Duration
	Description string
}

// ChartMuseumReference returns the published ChartMuseum figures for n
// versions, when there are any (n = 1,000 or 10,000).
func ChartMuseumReference(n int) (Reference, bool) {
	switch n {
	case 1000:
		return Reference{SeqTotal: 60 * time.Second, Growth: 2.5, IndexRPS: 4700, PeakRSSMiB: 137,
			Description: "ChartMuseum, 1,000 versions, as reported in issue #8 (not measured in this run)"}, true
	case 10000:
		return Reference{SeqTotal: 10000 * 1100 * time.Millisecond, IndexRPS: 320, PeakRSSMiB: 550, StartTime: 6500 * time.Millisecond,
			Description: "ChartMuseum, 10,000 versions, as reported in issue #8 (not measured in this run)"}, true
	}
	return Reference{}, false
}

// Markdown renders the results: settings, machine, the table, and the
// targets of issue #8.
func (r *Results) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s chart versions (%s)\n\n", thousands(r.N), r.Date.Format("2006-01-02"))
	fmt.Fprintf(&b, "- Date: %s\n", r.Date.Format(time.RFC3339))
	m := r.Machine
	fmt.Fprintf(&b, "- Machine: %d CPUs", m.CPUs)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, " (%s)", m.CPUModel)
	}
	if m.MemTotal > 0 {
		fmt.Fprintf(&b, ", %.1f GiB memory", float64(m.MemTotal)/(1<<30))
	}
	fmt.Fprintf(&b, ", %s", m.OS)
	if m.Kernel != "" {
		fmt.Fprintf(&b, ", kernel %s", m.Kernel)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Go: harness %s", m.GoVersion)
	if m.ServerGo != "" {
		fmt.Fprintf(&b, ", chartctl built with %s", m.ServerGo)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Corpus: %s archives per set, %s in total for the first set (%s average); load runs %v with %d connections; %d concurrent uploaders\n",
		thousands(r.N), mib(r.CorpusBytes), kib(r.CorpusBytes/int64(max(r.N, 1))), r.Duration, r.Conns, r.UploadClients)
	if r.Peer != nil {
		fmt.Fprintf(&b, "- Peer: %s\n", r.PeerURL)
	}
	fmt.Fprintf(&b, "- Reproduce: `%s`\n\n", r.Command)
	b.WriteString("The load generator runs on the same machine as the server and competes with it for the CPUs.\n\n")

	peer := r.Peer
	if peer != nil {
		b.WriteString("| Measure | chartctl | peer | chartctl advantage |\n|---|---:|---:|---:|\n")
	} else {
		b.WriteString("| Measure | chartctl |\n|---|---:|\n")
	}
	s := r.Server
	row := func(name, ours, theirs, adv string) {
		if peer != nil {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, ours, theirs, adv)
		} else {
			fmt.Fprintf(&b, "| %s | %s |\n", name, ours)
		}
	}
	var p SuiteResult
	if peer != nil {
		p = *peer
	}
	if s != nil {
		row(fmt.Sprintf("%s sequential uploads, total (keep-alive)", thousands(s.Seq.Count)), dur(s.SeqWall), dur(p.SeqWall), times(p.SeqWall.Seconds(), s.SeqWall.Seconds()))
		row("Sequential upload, median", dur(s.Seq.Median), dur(p.Seq.Median), times(p.Seq.Median.Seconds(), s.Seq.Median.Seconds()))
		row("Sequential upload, p99", dur(s.Seq.P99), dur(p.Seq.P99), times(p.Seq.P99.Seconds(), s.Seq.P99.Seconds()))
		row("Sequential upload, median of first 10 %", dur(s.SeqHead), dur(p.SeqHead), "")
		row("Sequential upload, median of last 10 %", dur(s.SeqTail), dur(p.SeqTail), "")
		row("Upload latency growth (last / first 10 %)", ratio(s.SeqTail.Seconds(), s.SeqHead.Seconds()), ratio(p.SeqTail.Seconds(), p.SeqHead.Seconds()), "")
		row(fmt.Sprintf("Concurrent uploads (%d clients), uploads/s", r.UploadClients), rate(s.ConcRate), rate(p.ConcRate), times(s.ConcRate, p.ConcRate))
		row("Concurrent upload, median / p99", dur(s.Conc.Median)+" / "+dur(s.Conc.P99), durPair(p.Conc), "")
		for _, l := range []struct {
			name   string
			ou, th *LoadResult
		}{
			{"`index.yaml`, gzip accepted", s.IndexGzip, p.IndexGzip},
			{"`index.yaml`, identity", s.IndexIdentity, p.IndexIdentity},
		} {
			row(l.name+", req/s", loadRate(l.ou), loadRate(l.th), times(rps(l.ou), rps(l.th)))
			row(l.name+", median / p99", loadLat(l.ou), loadLat(l.th), "")
			row(l.name+", bytes per response", loadSize(l.ou), loadSize(l.th), "")
		}
		row("Versions listed in `index.yaml` after the sequential uploads", thousands(s.IndexVersions), thousands(p.IndexVersions), "")
		if s.Repos != nil {
			row("Authenticated `GET /v1/repositories`, req/s", loadRate(s.Repos)+fmt.Sprintf(" (%.0f %% of /healthz)", 100*stats.Ratio(rps(s.Repos), rps(s.Healthz))), "", "")
			row("Authenticated chart list (limit 100), req/s", loadRate(s.Charts), "", "")
			row("`GET /healthz`, req/s", loadRate(s.Healthz), "", "")
			row("`GET /v1/repositories`, median / p99", loadLat(s.Repos), "", "")
		}
		if s.Search != nil {
			row(fmt.Sprintf("Search (%d sequential queries), median / p99", s.Search.Count), dur(s.Search.Median)+" / "+dur(s.Search.P99), "", "")
		}
		row("Peak RSS (VmHWM)", mibOrNA(s.PeakRSS), mibOrNA(p.PeakRSS), times(float64(p.PeakRSS), float64(s.PeakRSS)))
	}
	if r.StartEmpty > 0 {
		row("Start to healthy, empty data directory", dur(r.StartEmpty), "", "")
		row("Graceful stop (SIGTERM)", dur(r.StopTime), "", "")
		row(fmt.Sprintf("Restart to healthy with %s versions", thousands(r.VersionsUploaded)), dur(r.Restart), "", "")
		row("First `index.yaml` after restart", dur(r.FirstIndexAfterRestart), "", "")
		row("Versions in `index.yaml` after restart / acknowledged", fmt.Sprintf("%s / %s", thousands(r.VersionsAfterRestart), thousands(r.VersionsUploaded)), "", "")
	}
	if peer != nil {
		b.WriteString("\n\"chartctl advantage\" is how many times better chartctl did: the peer's time over chartctl's, or chartctl's rate over the peer's.\n")
	}
	b.WriteString("\n")
	r.writeTargets(&b)
	return b.String()
}

// writeTargets checks the targets of issue #8 against the peer measured in
// this run, else against the published ChartMuseum reference.
func (r *Results) writeTargets(b *strings.Builder) {
	s := r.Server
	if s == nil {
		return
	}
	ref, haveRef := ChartMuseumReference(r.N)
	var cmpName string
	var seqTotal, gzRPS, idRPS, rssMiB float64
	switch {
	case r.Peer != nil:
		cmpName = "the peer measured in this run"
		seqTotal, rssMiB = r.Peer.SeqWall.Seconds(), float64(r.Peer.PeakRSS)/(1<<20)
		gzRPS, idRPS = rps(r.Peer.IndexGzip), rps(r.Peer.IndexIdentity)
	case haveRef:
		cmpName = ref.Description
		seqTotal, rssMiB = ref.SeqTotal.Seconds(), ref.PeakRSSMiB
		// ChartMuseum does not compress: its one figure stands for both.
		gzRPS, idRPS = ref.IndexRPS, ref.IndexRPS
	}
	b.WriteString("#### Targets (issue #8)\n\n")
	if cmpName != "" {
		fmt.Fprintf(b, "Compared with %s.\n\n", cmpName)
	}
	b.WriteString("| Target | Measured | Status |\n|---|---|---|\n")
	verdict := func(ok, known bool) string {
		switch {
		case !known:
			return "not measured"
		case ok:
			return "met"
		}
		return "**missed**"
	}
	adv := stats.Ratio(seqTotal, s.SeqWall.Seconds())
	fmt.Fprintf(b, "| Sequential uploads ≥ 5× faster in total | %s | %s |\n", times(seqTotal, s.SeqWall.Seconds()), verdict(adv >= 5, seqTotal > 0))
	growth := stats.Ratio(s.SeqTail.Seconds(), s.SeqHead.Seconds())
	fmt.Fprintf(b, "| Upload latency growth ≤ 1.5 | %s | %s |\n", ratio(s.SeqTail.Seconds(), s.SeqHead.Seconds()), verdict(growth <= 1.5, growth > 0))
	g := stats.Ratio(rps(s.IndexGzip), gzRPS)
	fmt.Fprintf(b, "| `index.yaml` gzip req/s ≥ 5× | %s | %s |\n", times(rps(s.IndexGzip), gzRPS), verdict(g >= 5, gzRPS > 0 && s.IndexGzip != nil))
	id := stats.Ratio(rps(s.IndexIdentity), idRPS)
	fmt.Fprintf(b, "| `index.yaml` identity req/s ≥ 1× | %s | %s |\n", times(rps(s.IndexIdentity), idRPS), verdict(id >= 1, idRPS > 0 && s.IndexIdentity != nil))
	ours := float64(s.PeakRSS) / (1 << 20)
	rssOK := ours <= 70 && (rssMiB == 0 || ours <= rssMiB/2)
	fmt.Fprintf(b, "| Peak RSS ≤ ½ of the peer and ≤ 70 MiB | %s | %s |\n", mibOrNA(s.PeakRSS), verdict(rssOK, s.PeakRSS > 0))
	share := stats.Ratio(rps(s.Repos), rps(s.Healthz))
	fmt.Fprintf(b, "| `GET /v1/repositories` ≥ 50 %% of `/healthz` | %.0f %% | %s |\n", 100*share, verdict(share >= 0.5, s.Repos != nil && s.Healthz != nil))
	startKnown := r.Restart > 0 && r.VersionsUploaded >= 10000
	startNote := dur(r.Restart)
	if r.Restart > 0 && r.VersionsUploaded < 10000 {
		startNote += fmt.Sprintf(" with %s versions (target is for 10,000; run with --n 5000 or more)", thousands(r.VersionsUploaded))
	}
	fmt.Fprintf(b, "| Start to healthy with 10,000 versions < 1 s | %s | %s |\n", startNote, verdict(r.Restart < time.Second, startKnown))
	if r.VersionsUploaded > 0 {
		fmt.Fprintf(b, "| Every acknowledged upload survives a restart | %s / %s | %s |\n", thousands(r.VersionsAfterRestart), thousands(r.VersionsUploaded), verdict(r.VersionsAfterRestart == r.VersionsUploaded, true))
	}
}

// sectionMarkers are the comments around one run's section in a Markdown
// file; key distinguishes runs of different sizes.
func sectionMarkers(key string) (begin, end string) {
	return "<!-- chartbench:begin " + key + " -->", "<!-- chartbench:end " + key + " -->"
}

// WriteSection writes section into the Markdown file at path between the
// markers for key, replacing what an earlier run wrote there and leaving the
// rest of the file alone. A missing file is created with a title; a file
// without the markers gets the section appended. The file is replaced
// atomically.
func WriteSection(path, key, section string) error {
	begin, end := sectionMarkers(key)
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if os.IsNotExist(err) {
		old = []byte("# Performance\n")
	}
	block := begin + "\n" + strings.TrimRight(section, "\n") + "\n" + end
	var out []byte
	i := bytes.Index(old, []byte(begin))
	j := bytes.Index(old, []byte(end))
	if i >= 0 && j > i {
		out = append(out, old[:i]...)
		out = append(out, block...)
		out = append(out, old[j+len(end):]...)
	} else {
		out = append(bytes.TrimRight(old, "\n"), "\n\n"+block+"\n"...)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".chartbench-*.md")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func rps(l *LoadResult) float64 {
	if l == nil {
		return 0
	}
	return l.RPS
}

func loadRate(l *LoadResult) string {
	if l == nil {
		return ""
	}
	return rate(l.RPS)
}

func loadLat(l *LoadResult) string {
	if l == nil {
		return ""
	}
	return dur(l.Latency.Median) + " / " + dur(l.Latency.P99)
}

func loadSize(l *LoadResult) string {
	if l == nil {
		return ""
	}
	return kib(l.BodyBytes) + " (" + l.Encoding + ")"
}

func durPair(s stats.Summary) string {
	if s.Count == 0 {
		return ""
	}
	return dur(s.Median) + " / " + dur(s.P99)
}

// dur formats a duration with three significant digits in a readable unit;
// zero is the empty string (not measured).
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
}

func rate(v float64) string {
	if v <= 0 {
		return ""
	}
	if v < 100 {
		return fmt.Sprintf("%.1f/s", v)
	}
	return thousands(int(v+0.5)) + "/s"
}

// times formats a/b as "N×", empty when either is missing.
func times(a, b float64) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", a/b)
}

func kib(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return mib(n)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func mibOrNA(n int64) string {
	if n <= 0 {
		return ""
	}
	return mib(n)
}

// thousands writes n with comma separators: 10000 → "10,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
