// Command chartbench benchmarks a chartctl server over HTTP: it uploads a
// deterministic corpus of chart archives, loads the read paths for a fixed
// time, measures start-up and memory, optionally runs the same uploads and
// index loads against a peer chart server (ChartMuseum, say) and prints a
// Markdown table. It only ever targets loopback addresses.
//
//	chartbench                          # starts ./bin/chartctl on a temp dir
//	chartbench --n 10000 --markdown docs/performance.md
//	chartbench --url http://127.0.0.1:8080 --token $KEY
//	chartbench --peer http://127.0.0.1:8081   # ChartMuseum side by side
//
// `chartbench static` measures chartctl's read routes beside nginx serving
// the very bytes chartctl served (issue #19); it needs nginx and wrk
// (`apt-get install -y nginx wrk`):
//
//	chartbench static --rounds 5 --markdown docs/performance.md
//	chartbench static --profile /tmp/prof   # also pprof every route
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
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
	if len(args) > 0 && args[0] == "static" {
		return runStatic(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("chartbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg      harness.Config
		markdown string
		maxTime  time.Duration
	)
	fs.IntVar(&cfg.N, "n", 1000, "chart versions per upload set (the concurrent set adds as many again)")
	fs.StringVar(&cfg.URL, "url", "", "benchmark a running chartctl at this loopback URL instead of starting one")
	fs.StringVar(&cfg.Token, "token", os.Getenv("CHARTBENCH_TOKEN"), "API key for --url (default $CHARTBENCH_TOKEN)")
	fs.StringVar(&cfg.Binary, "binary", "./bin/chartctl", "chartctl binary to start when --url is not given")
	fs.StringVar(&cfg.Repo, "repo", "", `repository to create and fill (default "bench", or "bench-TIMESTAMP" with --url)`)
	fs.DurationVar(&cfg.Duration, "duration", 5*time.Second, "length of each read-load run")
	fs.IntVar(&cfg.Conns, "conns", 32, "connections of each read-load run")
	fs.IntVar(&cfg.UploadClients, "upload-clients", 8, "concurrent uploaders")
	fs.IntVar(&cfg.SearchQueries, "search-queries", 200, "sequential search requests")
	fs.StringVar(&cfg.Peer, "peer", "", "another chart server at this loopback URL to measure side by side")
	fs.StringVar(&cfg.PeerToken, "peer-token", os.Getenv("CHARTBENCH_PEER_TOKEN"), "bearer token for --peer, if it needs one (default $CHARTBENCH_PEER_TOKEN)")
	fs.StringVar(&cfg.PeerUploadPath, "peer-upload-path", "/api/charts", "the peer's upload path (ChartMuseum's by default)")
	fs.StringVar(&cfg.PeerField, "peer-field", "chart", "the peer's multipart field for the archive")
	fs.StringVar(&cfg.PeerIndexPath, "peer-index-path", "/index.yaml", "the peer's index.yaml path")
	fs.IntVar(&cfg.PeerPID, "peer-pid", 0, "the peer's process id, to report its peak RSS")
	fs.BoolVar(&cfg.KeepData, "keep-data", false, "keep the started server's data directory and log")
	fs.StringVar(&markdown, "markdown", "", "also write the results into this Markdown file, replacing the section of an earlier run of the same --n")
	fs.DurationVar(&maxTime, "max-time", time.Hour, "abort the whole run after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chartbench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg.Command = reproduce(fs)
	cfg.Log = stderr
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "chartbench: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxTime)
	defer cancel()

	res, err := harness.Run(ctx, cfg)
	if res != nil && res.Server != nil {
		fmt.Fprintln(stdout, res.Markdown())
	}
	if err != nil {
		fmt.Fprintf(stderr, "chartbench: %v\n", err)
		return 1
	}
	if markdown != "" {
		if err := harness.WriteSection(markdown, "n="+strconv.Itoa(cfg.N), res.Markdown()); err != nil {
			fmt.Fprintf(stderr, "chartbench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "chartbench: wrote %s\n", markdown)
	}
	return 0
}

// reproduce is the command line of this run with every flag that was set,
// secrets left to their environment variables.
func reproduce(fs *flag.FlagSet) string {
	parts := []string{"go run ./bench/cmd/chartbench"}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "token":
			parts = append(parts, "--token \"$CHARTBENCH_TOKEN\"")
		case "peer-token":
			parts = append(parts, "--peer-token \"$CHARTBENCH_PEER_TOKEN\"")
		case "markdown", "keep-data":
			// Where the results go does not change them.
		default:
			parts = append(parts, "--"+f.Name+" "+shellQuote(f.Value.String()))
		}
	})
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runStatic is `chartbench static`: the side-by-side with nginx.
func runStatic(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chartbench static", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg      harness.SideConfig
		markdown string
	)
	fs.IntVar(&cfg.N, "n", 1000, "chart versions in the public repository (and in the private one)")
	fs.StringVar(&cfg.Binary, "binary", "./bin/chartctl", "chartctl binary to start")
	fs.StringVar(&cfg.NginxBinary, "nginx", "nginx", "nginx binary ("+harness.NginxInstallHint+")")
	fs.StringVar(&cfg.WrkBinary, "wrk", "wrk", "wrk binary")
	fs.StringVar(&cfg.Load, "load", "wrk", "load generator: wrk, or go (built in, heavier on the CPU the servers share)")
	fs.IntVar(&cfg.Rounds, "rounds", 5, "interleaved rounds; the report gives medians")
	fs.DurationVar(&cfg.Duration, "duration", 3*time.Second, "length of one measurement")
	fs.IntVar(&cfg.Threads, "threads", 2, "load generator threads (wrk -t)")
	fs.IntVar(&cfg.Conns, "conns", 16, "connections (wrk -c)")
	fs.StringVar(&cfg.ProfileDir, "profile", "", "write a CPU and allocation profile of every chartctl route into this directory")
	fs.BoolVar(&cfg.KeepData, "keep-data", false, "keep the temporary directory (data, nginx root and logs)")
	fs.StringVar(&markdown, "markdown", "", "also write the table into this Markdown file, replacing an earlier run's section")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chartbench static: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg.Command = strings.Replace(reproduce(fs), "chartbench", "chartbench static", 1)
	cfg.Log = stderr
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "chartbench static: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := harness.RunSideBySide(ctx, cfg)
	if res != nil && len(res.Routes) > 0 && len(res.Routes[0].Ours) > 0 {
		fmt.Fprintln(stdout, res.Markdown())
	}
	if err != nil {
		fmt.Fprintf(stderr, "chartbench static: %v\n", err)
		return 1
	}
	if markdown != "" {
		if err := harness.WriteSection(markdown, "static-n="+strconv.Itoa(cfg.N), res.Markdown()); err != nil {
			fmt.Fprintf(stderr, "chartbench static: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "chartbench static: wrote %s\n", markdown)
	}
	return 0
}
