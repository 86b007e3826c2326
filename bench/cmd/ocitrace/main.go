// Command ocitrace summarizes a trace written by `ocibench --trace`: for
// each read, how chartctl's slices compare with the bare net/http
// handler's (or --against another server's) slice by slice, how much of
// that comparison's spread follows the machine's speed in each slice
// (the load generator's CPU per request), and how that speed moved
// during the run.
//
//	go run ./bench/cmd/ocibench ... --trace /tmp/trace.tsv
//	go run ./bench/cmd/ocitrace /tmp/trace.tsv
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/chartctl/chartctl/bench/harness"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ocitrace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	against := fs.String("against", "bare", "the server chartctl is compared with (bare, nginx, distribution, zot)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ocitrace [--against SERVER] TRACE (a file written by ocibench --trace)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "ocitrace:", err)
		return 1
	}
	defer f.Close()
	tr, err := harness.ReadTrace(f)
	if err != nil {
		fmt.Fprintf(stderr, "ocitrace: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	if len(tr) == 0 {
		fmt.Fprintf(stderr, "ocitrace: %s holds no slices\n", fs.Arg(0))
		return 1
	}
	if srvs := harness.Servers(tr); !slices.Contains(srvs, *against) || !slices.Contains(srvs, "chartctl") {
		fmt.Fprintf(stderr, "ocitrace: %s has slices of %s: --against needs one of them other than chartctl, and chartctl's\n", fs.Arg(0), strings.Join(srvs, ", "))
		return 1
	}
	fmt.Fprint(stdout, harness.TraceReport(tr, *against))
	return 0
}
