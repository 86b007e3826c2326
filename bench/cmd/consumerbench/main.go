// Command consumerbench measures the client side of a big repository
// (issue #32): the real Helm 3 and Helm 4 binaries running `helm repo add`,
// `helm repo update`, `helm search repo` and one `helm pull` against the
// same versions served as a YAML index, a JSON index and a per-chart index,
// at several repository sizes. It reports each step's wall time and the
// Helm process's peak RSS (getrusage's ru_maxrss of the child), the median
// of --rounds runs, as a Markdown table.
//
// The index bytes are rendered by chartctl's own index renderer
// (internal/helmindex) from synthetic versions of 100 charts and served
// from memory on a loopback address: filling a server with 100,000 real
// uploads takes hours, and the bytes are exactly those a server sends.
// The pulled version is a real chart archive whose digest the index
// carries.
//
//	go run ./bench/cmd/consumerbench --helm3 "$CHARTCTL_HELM3" \
//	    --helm4 "$CHARTCTL_HELM4" --markdown docs/performance.md
//
// --sizes 1000 --rounds 1 makes a quick smoke run.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chartctl/chartctl/bench/harness"
	"github.com/chartctl/chartctl/bench/stats"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == launchArg {
		os.Exit(launch(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// launchArg makes the binary a small launcher that runs the command after
// it and prints the command's peak RSS in bytes. Linux carries a process's
// peak RSS across exec from the process that forked it, so a Helm forked
// by the benchmark (which holds the rendered indexes) would report the
// benchmark's own peak; forked by a freshly started launcher, it reports
// its own (plus the launcher's few MiB at most).
const launchArg = "__consumerbench_launch"

// launch runs args[0] with args[1:], its output passed through, and prints
// "maxrss=N" on stderr's last line.
func launch(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "consumerbench launcher:", err)
		return 1
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // kilobytes on Linux
	}
	fmt.Fprintf(os.Stderr, "\nmaxrss=%d\n", rss)
	return cmd.ProcessState.ExitCode()
}

// charts is how many charts the synthetic repository spreads its versions
// over; the measured chart is the first.
const charts = 100

// pulledChart is the chart searched for and pulled.
const pulledChart = "chart-00"

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("consumerbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		helm3, helm4, sizes, markdown string
		rounds                        int
	)
	fs.StringVar(&helm3, "helm3", os.Getenv("CHARTCTL_HELM3"), "Helm 3 binary, empty to skip (default $CHARTCTL_HELM3)")
	fs.StringVar(&helm4, "helm4", os.Getenv("CHARTCTL_HELM4"), "Helm 4 binary, empty to skip (default $CHARTCTL_HELM4)")
	fs.StringVar(&sizes, "sizes", "1000,10000,100000", "repository sizes in versions, comma-separated")
	fs.IntVar(&rounds, "rounds", 3, "runs of each measurement (the median is reported)")
	fs.StringVar(&markdown, "markdown", "", `also write the table into this file's "consumer-helm" section`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < charts {
			fmt.Fprintf(stderr, "consumerbench: invalid --sizes entry %q: want a number of versions ≥ %d\n", s, charts)
			return 2
		}
		ns = append(ns, n)
	}
	helms := []helmBinary{}
	for _, h := range []helmBinary{{"Helm 3", helm3}, {"Helm 4", helm4}} {
		if h.path != "" {
			helms = append(helms, h)
		}
	}
	if len(helms) == 0 {
		fmt.Fprintln(stderr, "consumerbench: no helm binary: set --helm3 or --helm4 (or CHARTCTL_HELM3 / CHARTCTL_HELM4)")
		return 2
	}
	if rounds < 1 {
		fmt.Fprintln(stderr, "consumerbench: --rounds must be at least 1")
		return 2
	}
	rows, err := measure(context.Background(), ns, helms, rounds, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "consumerbench:", err)
		return 1
	}
	md := report(rows, "go run ./bench/cmd/consumerbench "+strings.Join(args, " "))
	fmt.Fprint(stdout, md)
	if markdown != "" {
		if err := harness.WriteSection(markdown, "consumer-helm", md); err != nil {
			fmt.Fprintln(stderr, "consumerbench:", err)
			return 1
		}
	}
	return 0
}

// helmBinary is one Helm to measure.
type helmBinary struct{ label, path string }

// variant is one way of serving the repository to Helm.
type variant struct {
	label string
	// path is the repository URL's path (Helm appends /index.yaml).
	path string
	q    helmindex.Query
}

var variants = []variant{
	{"YAML index", "/yaml", helmindex.Query{Format: helmindex.YAML}},
	{"JSON index", "/json", helmindex.Query{Format: helmindex.JSON}},
	{"per-chart JSON index", "/json/charts/" + pulledChart, helmindex.Query{Format: helmindex.JSON, Chart: pulledChart}},
}

// steps are the Helm commands run, in order, each measured.
var steps = []string{"repo add", "repo update", "search repo", "pull"}

// row is the result of one (size, Helm, variant).
type row struct {
	versions   int
	helm       string
	variant    string
	indexBytes int
	// time and rss per step, medians over the rounds.
	time map[string]time.Duration
	rss  map[string]int64
}

func measure(ctx context.Context, ns []int, helms []helmBinary, rounds int, log io.Writer) ([]row, error) {
	archive, err := chartArchive(pulledChart, "9.9.9")
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, n := range ns {
		fmt.Fprintf(log, "consumerbench: rendering %d versions\n", n)
		bodies, err := render(ctx, n, archive)
		if err != nil {
			return nil, err
		}
		srv, url, err := serve(bodies, archive)
		if err != nil {
			return nil, err
		}
		for _, h := range helms {
			for _, v := range variants {
				fmt.Fprintf(log, "consumerbench: %d versions, %s, %s\n", n, h.label, v.label)
				r := row{versions: n, helm: h.label, variant: v.label, indexBytes: len(bodies[v.path]),
					time: map[string]time.Duration{}, rss: map[string]int64{}}
				times := map[string][]time.Duration{}
				rsss := map[string][]int64{}
				for range rounds {
					got, err := runHelm(ctx, h.path, url+v.path)
					if err != nil {
						srv.Close()
						return nil, fmt.Errorf("%s, %s, %d versions: %w", h.label, v.label, n, err)
					}
					for _, s := range steps {
						times[s] = append(times[s], got[s].time)
						rsss[s] = append(rsss[s], got[s].rss)
					}
				}
				for _, s := range steps {
					r.time[s] = stats.Median(times[s])
					slices.Sort(rsss[s])
					r.rss[s] = rsss[s][len(rsss[s])/2]
				}
				rows = append(rows, r)
			}
		}
		srv.Close()
	}
	return rows, nil
}

// measurement is one step's wall time and the child's peak RSS in bytes.
type measurement struct {
	time time.Duration
	rss  int64
}

// runHelm runs the steps with a fresh Helm home against the repository at
// repoURL.
func runHelm(ctx context.Context, helm, repoURL string) (map[string]measurement, error) {
	home, err := os.MkdirTemp("", "consumerbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"HELM_REGISTRY_CONFIG="+filepath.Join(home, "registry.json"),
		"HELM_REPOSITORY_CONFIG="+filepath.Join(home, "repositories.yaml"),
		"HELM_REPOSITORY_CACHE="+filepath.Join(home, "cache", "repository"),
	)
	args := map[string][]string{
		"repo add":    {"repo", "add", "bench", repoURL},
		"repo update": {"repo", "update", "bench"},
		"search repo": {"search", "repo", "bench/" + pulledChart},
		"pull":        {"pull", "bench/" + pulledChart, "--version", "9.9.9", "--destination", filepath.Join(home, "pulled")},
	}
	if err := os.Mkdir(filepath.Join(home, "pulled"), 0o755); err != nil {
		return nil, err
	}
	out := map[string]measurement{}
	for _, s := range steps {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, self, append([]string{launchArg, helm}, args[s]...)...)
		cmd.Env = env
		var buf, errBuf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &errBuf
		start := time.Now()
		err = cmd.Run()
		elapsed := time.Since(start)
		errText, rssText, _ := strings.Cut(errBuf.String(), "\nmaxrss=")
		if err != nil {
			return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args[s], " "), err, strings.TrimSpace(buf.String()+errText))
		}
		if s == "search repo" && !strings.Contains(buf.String(), "bench/"+pulledChart) {
			return nil, fmt.Errorf("helm search repo found nothing: %s", buf.String())
		}
		rss, err := strconv.ParseInt(strings.TrimSpace(rssText), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("helm %s: the launcher reported no peak RSS: %q", strings.Join(args[s], " "), errBuf.String())
		}
		out[s] = measurement{time: elapsed, rss: rss}
	}
	if _, err := os.Stat(filepath.Join(home, "pulled", pulledChart+"-9.9.9.tgz")); err != nil {
		return nil, fmt.Errorf("helm pull wrote no archive: %w", err)
	}
	return out, nil
}

// render makes the index bodies of every variant for a repository of n
// versions: charts chart-00 … chart-99 with n/100 versions each, plus the
// real archive's version 9.9.9 of chart-00.
func render(ctx context.Context, n int, archive []byte) (map[string][]byte, error) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cvs := make([]*chartctl.ChartVersion, 0, n+1)
	for i := range n {
		name := fmt.Sprintf("chart-%02d", i%charts)
		cv, err := version(name, fmt.Sprintf("1.%d.%d", i/charts/100, i/charts%100), t0.Add(time.Duration(i)*time.Second), nil)
		if err != nil {
			return nil, err
		}
		cvs = append(cvs, cv)
	}
	real, err := version(pulledChart, "9.9.9", t0.Add(time.Duration(n)*time.Second), archive)
	if err != nil {
		return nil, err
	}
	cvs = append(cvs, real)
	load := func(context.Context, string) ([]*chartctl.ChartVersion, error) { return cvs, nil }
	cache := helmindex.New(load, helmindex.Options{})
	bodies := map[string][]byte{}
	for _, v := range variants {
		ix, err := cache.View(ctx, "bench", v.q)
		if err != nil {
			return nil, err
		}
		bodies[v.path] = ix.Body
	}
	return bodies, nil
}

// version is a stored version record as an upload makes it; archive, when
// given, is the version's real archive (its digest and size are used).
func version(name, ver string, created time.Time, archive []byte) (*chartctl.ChartVersion, error) {
	md := map[string]any{"apiVersion": "v2", "name": name, "version": ver,
		"description": "The " + name + " chart", "appVersion": "1.0", "type": "application"}
	js, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(name + ver))
	size := int64(1234)
	if archive != nil {
		sum = sha256.Sum256(archive)
		size = int64(len(archive))
	}
	return &chartctl.ChartVersion{
		Repository: "bench", Name: name, Version: ver, AppVersion: "1.0",
		Description: "The " + name + " chart",
		Digest:      "sha256:" + hex.EncodeToString(sum[:]), Size: size,
		CreatedAt: created, Metadata: js,
	}, nil
}

// serve answers every variant's index.yaml and the real archive (at the
// relative URL the index gives it, under every variant's path) on a
// loopback address.
func serve(bodies map[string][]byte, archive []byte) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	archiveName := "/" + pulledChart + "-9.9.9.tgz"
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for path, body := range bodies {
			if r.URL.Path == path+"/index.yaml" {
				w.Header().Set("Content-Type", "application/x-yaml")
				_, _ = w.Write(body)
				return
			}
			if strings.HasPrefix(r.URL.Path, path+"/") && strings.HasSuffix(r.URL.Path, archiveName) {
				w.Header().Set("Content-Type", "application/gzip")
				_, _ = w.Write(archive)
				return
			}
		}
		http.NotFound(w, r)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "consumerbench: serve:", err)
		}
	}()
	return srv, "http://" + ln.Addr().String(), nil
}

// chartArchive packages a minimal valid chart as Helm does (a gzipped tar
// whose entries sit under the chart's name).
func chartArchive(name, ver string) ([]byte, error) {
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: " + name + "\nversion: " + ver + "\nappVersion: \"1.0\"\ndescription: The " + name + " chart\ntype: application\n",
		"values.yaml": "replicaCount: 1\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n" +
			"data:\n  replicas: {{ .Values.replicaCount | quote }}\n",
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range []string{"Chart.yaml", "values.yaml", "templates/configmap.yaml"} {
		body := files[p]
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + p, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// report is the Markdown table of the rows, and the YAML/JSON ratios at
// each size and Helm.
func report(rows []row, command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured with `%s` on %s.\n\n", command, time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| versions | Helm | served as | index | repo add | repo update | search repo | pull | peak RSS (update) | peak RSS (search) |\n")
	b.WriteString("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.versions, r.helm, r.variant, mib(int64(r.indexBytes)),
			secs(r.time["repo add"]), secs(r.time["repo update"]), secs(r.time["search repo"]), secs(r.time["pull"]),
			mib(r.rss["repo update"]), mib(r.rss["search repo"]))
	}
	b.WriteString("\nYAML index against JSON index (time of `repo update` + `search repo` + `pull`; peak RSS of `search repo`):\n\n")
	b.WriteString("| versions | Helm | YAML/JSON time | JSON/YAML memory | YAML/per-chart time |\n|---:|---|---:|---:|---:|\n")
	for _, y := range rows {
		if y.variant != variants[0].label {
			continue
		}
		var j, pc *row
		for i := range rows {
			if rows[i].versions == y.versions && rows[i].helm == y.helm {
				switch rows[i].variant {
				case variants[1].label:
					j = &rows[i]
				case variants[2].label:
					pc = &rows[i]
				}
			}
		}
		if j == nil || pc == nil {
			continue
		}
		total := func(r *row) float64 {
			return (r.time["repo update"] + r.time["search repo"] + r.time["pull"]).Seconds()
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f× | %.2f | %.1f× |\n", y.versions, y.helm,
			stats.Ratio(total(&y), total(j)), stats.Ratio(float64(j.rss["search repo"]), float64(y.rss["search repo"])),
			stats.Ratio(total(&y), total(pc)))
	}
	return b.String()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
