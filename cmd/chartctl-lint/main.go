// Command chartctl-lint lints a chart archive read from standard input
// with Helm's lint rules and writes the messages as JSON; `chartctl-lint
// render` instead renders the chart with its default values and writes
// the manifests and the images they deploy as JSON. `chartctl-lint serve`
// is a long-lived worker that answers both, one request after another, in
// the framed protocol of internal/sandbox: chartctl serve keeps a few
// warm, bounded in time and memory (CONTRACT §18 decision 9). Install it
// next to the chartctl binary.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartdiff/helmrender"
	"github.com/chartctl/chartctl/internal/sandbox"
)

// renderMode is the request mode of a rendering in a worker (as
// chartdiff.Subprocess sends it).
const renderMode = "render"

func main() {
	lim := chart.DefaultLimits()
	var err error
	switch mode := ""; {
	case len(os.Args) > 1 && os.Args[1] == "serve":
		err = serve(lim)
	case len(os.Args) > 1 && os.Args[1] == renderMode:
		err = helmrender.RunChild(os.Stdin, os.Stdout, lim)
	case len(os.Args) > 1:
		mode = os.Args[1]
		fmt.Fprintf(os.Stderr, "chartctl-lint: unknown mode %q (lint with no argument, render, or serve)\n", mode)
		os.Exit(2)
	default:
		err = helmlint.RunLintChild(os.Stdin, os.Stdout, lim)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartctl-lint:", err)
		os.Exit(1)
	}
}

// serve answers the pool's requests. Standard output carries the frames
// only: anything a library prints goes to standard error instead.
func serve(lim chart.Limits) error {
	out := os.Stdout
	os.Stdout = os.Stderr
	return sandbox.Serve(os.Stdin, out, map[string]sandbox.Handler{
		admission.LintMode: helmlint.Handle(lim),
		renderMode: func(_ sandbox.Request, archive []byte) ([]byte, error) {
			return json.Marshal(helmrender.Render(context.Background(), archive, lim))
		},
	})
}
