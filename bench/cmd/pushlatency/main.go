// Command pushlatency pushes new versions of a chart to a running
// chartctl (or any OCI registry) with the requests Helm sends
// (testkit.PushLikeHelm, no Helm process), one push after the other, and
// prints the time a push took and, per kind of request, how long the
// client waited for its answers: where a push's time goes, as the
// client sees it.
//
//	go run ./bench/cmd/pushlatency --base http://127.0.0.1:8080 --repo apps \
//	    --user admin --password "$CHARTCTL_API_KEY" --n 300
//
// The versions are <--version-prefix><i> for i from --start; pushing the
// same ones twice measures re-pushes, not pushes.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chartctl/chartctl/bench/harness"
	"github.com/chartctl/chartctl/internal/testkit"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pushlatency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "", "the registry's URL, e.g. http://127.0.0.1:8080")
	repo := fs.String("repo", "", "the repository (chartctl) or namespace the chart is pushed into")
	chartName := fs.String("chart", "web", "the chart's name")
	user := fs.String("user", "", "the user name of HTTP Basic authentication (none when empty)")
	password := fs.String("password", "", "its password or API key")
	n := fs.Int("n", 100, "how many versions to push")
	start := fs.Int("start", 0, "the number of the first version")
	prefix := fs.String("version-prefix", "2.0.", "the versions' prefix")
	pause := fs.Duration("pause", 0, "a pause after each push, not counted (the side-by-side's slices leave a server such pauses, in which its background work runs)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *base == "" || *repo == "" || *n < 1 {
		fmt.Fprintln(stderr, "pushlatency: --base and --repo are required, and --n must be at least 1")
		return 2
	}
	charts := make([]*testkit.OCIChart, *n)
	for i := range charts {
		v := fmt.Sprintf("%s%d", *prefix, *start+i)
		c, err := testkit.NewOCIChart(*chartName, v, harness.ChartArchive(*chartName, v, 0))
		if err != nil {
			fmt.Fprintln(stderr, "pushlatency:", err)
			return 1
		}
		charts[i] = c
	}
	rec := &recorder{next: http.DefaultTransport, waits: map[string][]time.Duration{}}
	client := &http.Client{Transport: rec, Timeout: time.Minute}
	var elapsed time.Duration
	for _, c := range charts {
		began := time.Now()
		if err := testkit.PushLikeHelm(client, strings.TrimSuffix(*base, "/"), *repo, *user, *password, c); err != nil {
			fmt.Fprintf(stderr, "pushlatency: push %s %s: %v\n", c.Name, c.Tag, err)
			return 1
		}
		elapsed += time.Since(began)
		time.Sleep(*pause)
	}
	fmt.Fprintf(stdout, "%d pushes in %.2f s (pauses not counted): %.2f ms a push, %.1f pushes/s\n\n", *n, elapsed.Seconds(),
		ms(elapsed)/float64(*n), float64(*n)/elapsed.Seconds())
	rec.write(stdout)
	return 0
}

// recorder times each request it sends, by kind (requestKind).
type recorder struct {
	next  http.RoundTripper
	mu    sync.Mutex
	kinds []string
	waits map[string][]time.Duration
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	began := time.Now()
	resp, err := r.next.RoundTrip(req)
	waited := time.Since(began)
	k := requestKind(req)
	r.mu.Lock()
	if _, ok := r.waits[k]; !ok {
		r.kinds = append(r.kinds, k)
	}
	r.waits[k] = append(r.waits[k], waited)
	r.mu.Unlock()
	return resp, err
}

// requestKind names a registry request by its method and what it
// addresses.
func requestKind(req *http.Request) string {
	p := req.URL.Path
	what := "other"
	switch {
	case strings.HasSuffix(p, "/blobs/uploads/"):
		what = "upload (start)"
	case strings.Contains(p, "/blobs/uploads/"):
		what = "upload"
	case strings.Contains(p, "/blobs/"):
		what = "blob"
	case strings.Contains(p, "/manifests/sha256:"):
		what = "manifest by digest"
	case strings.Contains(p, "/manifests/"):
		what = "manifest by tag"
	case strings.Contains(p, "/token"):
		what = "token"
	}
	return req.Method + " " + what
}

// write prints a table of the waits by kind, in the order of the kinds'
// first requests.
func (r *recorder) write(w io.Writer) {
	fmt.Fprintln(w, "| request | count | mean | p50 | p90 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, k := range r.kinds {
		ds := slices.Clone(r.waits[k])
		slices.Sort(ds)
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		fmt.Fprintf(w, "| `%s` | %d | %.2f ms | %.2f ms | %.2f ms |\n", k, len(ds),
			ms(sum)/float64(len(ds)), ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
