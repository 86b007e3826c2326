// Command chartctl-lint lints a chart archive read from standard input
// with Helm's lint rules and writes the messages as JSON; `chartctl-lint
// render` instead renders the chart with its default values and writes
// the manifests and the images they deploy as JSON. chartctl serve runs
// it as a child process per chart, bounded in time and memory (CONTRACT
// §18 decision 9); install it next to the chartctl binary.
package main

import (
	"fmt"
	"os"

	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartdiff/helmrender"
)

func main() {
	run := helmlint.RunLintChild
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "render":
			run = helmrender.RunChild
		default:
			fmt.Fprintf(os.Stderr, "chartctl-lint: unknown mode %q (lint with no argument, or render)\n", os.Args[1])
			os.Exit(2)
		}
	}
	if err := run(os.Stdin, os.Stdout, chart.DefaultLimits()); err != nil {
		fmt.Fprintln(os.Stderr, "chartctl-lint:", err)
		os.Exit(1)
	}
}
