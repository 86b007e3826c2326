// Command chartctl-lint lints a chart archive read from standard input
// with Helm's lint rules and writes the messages as JSON. chartctl serve
// runs it as a child process per chart, bounded in time and memory
// (CONTRACT §18 decision 9); install it next to the chartctl binary.
package main

import (
	"fmt"
	"os"

	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/chart"
)

func main() {
	if err := helmlint.RunLintChild(os.Stdin, os.Stdout, chart.DefaultLimits()); err != nil {
		fmt.Fprintln(os.Stderr, "chartctl-lint:", err)
		os.Exit(1)
	}
}
