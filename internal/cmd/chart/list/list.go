// Package list implements `chartctl chart list`.
package list

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// ListOptions are the inputs of `chart list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool
	Now    func() time.Time

	Repo    string
	Name    string
	Version string
}

// NewCmdList returns the `chart list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list --repo REPO",
		Aliases: []string{"ls"},
		Short:   "List the chart versions of a repository",
		Example: `  chartctl chart list --repo stable
  chartctl chart list --repo stable --name nginx
  chartctl chart list --repo stable --version 1.2.3 -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "repository (required)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "only the chart with this name")
	cmd.Flags().StringVar(&opts.Version, "version", "", "only this version")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	charts, err := client.Collect(c.Charts.All(ctx, opts.Repo, client.ChartListOptions{Name: opts.Name, Version: opts.Version}))
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("list charts of %s: %w", opts.Repo, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, charts)
	}
	if len(charts) == 0 && opts.IO.IsStdoutTTY() {
		if opts.Name != "" || opts.Version != "" {
			// The repository may well have charts, just none that match.
			fmt.Fprintf(opts.IO.ErrOut, "No chart versions in %s match%s.\n", termtext.Line(opts.Repo), filterText(opts.Name, opts.Version))
			return nil
		}
		fmt.Fprintf(opts.IO.ErrOut, "No charts in %s. Push one with: chartctl chart push PATH --repo %s\n", termtext.Line(opts.Repo), termtext.Line(opts.Repo))
		return nil
	}
	cs := opts.IO.ColorScheme()
	now := opts.Now()
	t := opts.Table()
	t.Header("name", "version", "app version", "description", "downloads", "created")
	t.KeepWhole(0, 1)
	// On a narrow terminal the creation time, the downloads, then the app
	// version go first.
	t.Optional(5, 4, 2)
	for _, ch := range charts {
		t.AddField(ch.Name, cs.Bold)
		t.AddField(ch.Version)
		t.AddField(ch.AppVersion)
		t.AddField(ch.Description)
		t.AddField(strconv.FormatInt(ch.Downloads, 10))
		t.AddField(cmdutil.FormatTime(opts.IO, now, ch.CreatedAt), cs.Gray)
		t.EndRow()
	}
	return t.Render()
}

// filterText describes the --name and --version filters that are set.
func filterText(name, version string) string {
	var s string
	if name != "" {
		s += " --name " + termtext.Line(name)
	}
	if version != "" {
		s += " --version " + termtext.Line(version)
	}
	return s
}
