// Package diff implements `chartctl chart diff`.
package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DiffOptions are the inputs of `chart diff`.
type DiffOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name, From, To string
	Repo, ToRepo   string
	// ValuesOnly prints only the values.yaml keys that changed.
	ValuesOnly bool
}

// NewCmdDiff returns the `chart diff` command.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "diff NAME FROM TO --repo REPO [--to-repo REPO] [--values-only]",
		Short: "Show what changed between two versions of a chart",
		Long: `Show what changed between two versions of a chart: the values.yaml keys
added, removed and changed (dotted paths, such as image.tag), then the
unified diff of every file that differs (Chart.yaml and its dependencies,
values.yaml, values.schema.json, README, CRDs, templates). --to-repo takes
TO from another repository, to compare a chart across repositories.
--values-only prints only the values.yaml keys. On a terminal the diff is
coloured; in a pipe it is plain, ready for patch(1) or a pager. -o json
prints the API's answer.`,
		Example: `  chartctl chart diff web 1.0.0 1.1.0 --repo stable
  chartctl chart diff web 1.0.0 1.1.0 --repo stable --values-only
  chartctl chart diff web 1.1.0 1.1.0 --repo stable --to-repo staging`,
		Args: cmdutil.ExactArgs(3, "a chart name and two versions are required: chartctl chart diff NAME FROM TO --repo REPO"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.From, opts.To = args[0], args[1], args[2]
			// A unified diff is already a machine format (patch reads
			// it), so pipes get the text too; JSON only when asked.
			opts.JSON = f.Flags.Output == cmdutil.OutputJSON
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "repository of FROM, and of TO unless --to-repo (required)")
	cmd.Flags().StringVar(&opts.ToRepo, "to-repo", "", "repository of TO, when not --repo")
	cmd.Flags().BoolVar(&opts.ValuesOnly, "values-only", false, "print only the values.yaml keys added, removed and changed")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	_ = cmd.RegisterFlagCompletionFunc("to-repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func diffRun(ctx context.Context, opts *DiffOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	d, _, err := c.Charts.Diff(ctx, opts.Repo, opts.Name, opts.From, opts.To, &client.DiffOptions{ToRepository: opts.ToRepo})
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("diff %s %s %s: %w", opts.Name, opts.From, opts.To, err), cmdutil.HintChartList(opts.Repo))
	}
	if opts.JSON {
		if opts.ValuesOnly {
			return cmdutil.PrintJSON(opts.IO.Out, d.Values)
		}
		return cmdutil.PrintJSON(opts.IO.Out, d)
	}
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	printValues(w, cs, d)
	if opts.ValuesOnly {
		return nil
	}
	if d.RenderedError != "" {
		// Why the rendered/… entries are missing, so their absence is
		// not read as "the manifests did not change".
		fmt.Fprintln(w, cs.Gray(termtext.Line("rendered manifests: "+d.RenderedError)))
	}
	for _, f := range d.Files {
		fmt.Fprintln(w)
		printUnified(w, cs, f.Diff)
	}
	return nil
}

// printValues prints the values.yaml keys, one a line: + added, - removed,
// ~ changed (old → new).
func printValues(w io.Writer, cs *iostreams.ColorScheme, d *client.ChartDiff) {
	v := d.Values
	switch {
	case d.ValuesError != "":
		fmt.Fprintf(w, "%s\n", termtext.Line("values.yaml: "+d.ValuesError))
		return
	case len(v.Added)+len(v.Removed)+len(v.Changed) == 0:
		fmt.Fprintln(w, cs.Gray("values.yaml: no key added, removed or changed"))
		return
	}
	fmt.Fprintln(w, cs.Bold("values.yaml keys:"))
	for _, k := range v.Added {
		fmt.Fprintln(w, cs.Green("+ "+termtext.Line(k)))
	}
	for _, k := range v.Removed {
		fmt.Fprintln(w, cs.Red("- "+termtext.Line(k)))
	}
	for _, ch := range v.Changed {
		fmt.Fprintln(w, cs.Yellow("~ "+termtext.Line(ch.Key)+": "+termtext.Line(value(ch.From))+" → "+termtext.Line(value(ch.To))))
	}
}

// value spells a default as YAML would show it: strings bare, the rest as
// JSON.
func value(v any) string {
	// A string reads as typed, but an empty one as "" (a bare blank
	// between ": " and "→" reads as a missing value).
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// printUnified prints a file's unified diff, each line stripped of
// terminal controls (a chart's files are untrusted) and coloured on a
// terminal as git does.
func printUnified(w io.Writer, cs *iostreams.ColorScheme, diff string) {
	for _, l := range strings.SplitAfter(strings.TrimSuffix(diff, "\n"), "\n") {
		l = termtext.Sanitize(strings.TrimSuffix(l, "\n"))
		switch {
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
			l = cs.Bold(l)
		case strings.HasPrefix(l, "@@"):
			l = cs.Cyan(l)
		case strings.HasPrefix(l, "+"):
			l = cs.Green(l)
		case strings.HasPrefix(l, "-"):
			l = cs.Red(l)
		}
		fmt.Fprintln(w, l)
	}
}
