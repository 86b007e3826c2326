// Command ocibench runs chartctl's OCI registry side by side with CNCF
// Distribution, zot (when --zot names its binary), nginx serving the very
// bytes chartctl served, and a bare net/http handler answering them from
// memory (issue #32), in interleaved rounds, and prints a Markdown table
// of the rates and their ratios:
// manifest GET, small and big blob GETs, tags/list of the measured chart
// (whole and a page) and a page of a chart of --big-tags tags,
// _catalog, a raw push (Helm's requests without a Helm process) and
// `helm push`. With zot it adds zot's columns and a table of the issue's
// targets against the faster peer. It only ever listens on loopback
// addresses.
//
//	GOBIN=/tmp/dist-bin go install github.com/distribution/distribution/v3/cmd/registry@v3.1.2
//	(cd zot-v2.1.20 && CGO_ENABLED=0 GOEXPERIMENT=jsonv2 go build -o /tmp/zot-bin/zot ./cmd/zot)
//	apt-get install -y nginx
//	go build -o bin/chartctl ./cmd/chartctl
//	go run ./bench/cmd/ocibench --distribution /tmp/dist-bin/registry \
//	    --zot /tmp/zot-bin/zot --helm "$CHARTCTL_HELM4" --markdown docs/performance.md
//
// --big-tags 1000 --rounds 1 --duration 1s makes a quick smoke run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/chartctl/chartctl/bench/harness"
)

func main() {
	// The bare net/http floor runs as a child of this command.
	harness.ServeFloorIfChild()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ocibench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg      harness.OCIConfig
		markdown string
		trace    string
	)
	fs.IntVar(&cfg.N, "n", 300, "versions of the measured chart")
	fs.IntVar(&cfg.BigTags, "big-tags", 100_000, "tags of the chart whose tags/list page is measured at scale")
	fs.StringVar(&cfg.Binary, "binary", "./bin/chartctl", "chartctl binary")
	fs.StringVar(&cfg.Distribution, "distribution", os.Getenv("CHARTCTL_DISTRIBUTION"), "Distribution's registry binary (default $CHARTCTL_DISTRIBUTION)")
	fs.StringVar(&cfg.Zot, "zot", os.Getenv("CHARTCTL_ZOT"), "zot's binary (v2.1.20), empty to leave zot out (default $CHARTCTL_ZOT)")
	fs.StringVar(&cfg.Helm, "helm", os.Getenv("CHARTCTL_HELM4"), "helm binary for the helm push rows, empty to skip them (default $CHARTCTL_HELM4)")
	fs.StringVar(&cfg.NginxBinary, "nginx", "", "nginx binary (default: nginx from PATH)")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "interleaved rounds")
	fs.DurationVar(&cfg.Duration, "duration", 3*time.Second, "length of each read measurement")
	fs.IntVar(&cfg.Pushes, "pushes", 20, "pushes of each push measurement")
	fs.IntVar(&cfg.Slices, "slices", 0, "slices of each read measurement, taken in turn by the servers (0: slices of 250ms, at most 20; 1: one block per server)")
	fs.IntVar(&cfg.Conns, "conns", 16, "connections of each read measurement")
	fs.IntVar(&cfg.Replicas, "replicas", 0, "more chartctl replicas to start, idle, on the same --serve-arg=--database (the measured one is then not alone on its database); --markdown then writes the \"oci-side-by-side-serve-args-replicas\" section")
	fs.Func("serve-arg", "one more argument of chartctl's serve, repeated for each (say --serve-arg=--database=postgres://… --serve-arg=--blob-store=s3://…); --markdown then writes the \"oci-side-by-side-serve-args\" section", func(v string) error {
		cfg.ServeArgs = append(cfg.ServeArgs, v)
		return nil
	})
	fs.BoolVar(&cfg.TLS, "tls", false, "run every server over HTTPS with one certificate every client trusts (the issue's targets within 2×); --markdown then writes the \"oci-side-by-side-tls\" section")
	fs.BoolVar(&harness.FloorInProcess, "floor-in-process", false, "serve the bare net/http floor inside this process, as runs before 2026-11-29 did")
	fs.StringVar(&markdown, "markdown", "", `also write the table into this file's "oci-side-by-side" section`)
	fs.StringVar(&trace, "trace", "", "write a line per measured slice into this file: the server, its rate, and the CPU time each server, the load generator and the kernel took meanwhile")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.Log = stderr
	if trace != "" {
		f, err := os.Create(trace)
		if err != nil {
			fmt.Fprintln(stderr, "ocibench:", err)
			return 1
		}
		defer f.Close()
		cfg.Trace = f
	}
	cfg.Command = "go run ./bench/cmd/ocibench " + strings.Join(args, " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := harness.RunOCISideBySide(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "ocibench:", err)
		return 1
	}
	md := res.Markdown()
	fmt.Fprint(stdout, md)
	if markdown != "" {
		section := "oci-side-by-side"
		if len(cfg.ServeArgs) > 0 {
			section += "-serve-args"
		}
		if cfg.Replicas > 0 {
			section += "-replicas"
		}
		if cfg.TLS {
			section += "-tls"
		}
		if err := harness.WriteSection(markdown, section, md); err != nil {
			fmt.Fprintln(stderr, "ocibench:", err)
			return 1
		}
	}
	return 0
}
