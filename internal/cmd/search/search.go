// Package search implements `chartctl search`.
package search

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// SearchOptions are the inputs of `search`.
type SearchOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Table  func() *text.Table
	JSON   bool

	Query string
	Repo  string
	Limit int
}

// NewCmdSearch returns the `search` command.
func NewCmdSearch(f *cmdutil.Factory, runF func(*SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search charts by name, description and keywords",
		Long: `Search the charts of every repository you can read (or of --repo) by
name, description and keywords. Each chart is shown once, at its newest
version; name matches come first.`,
		Example: `  chartctl search nginx
  chartctl search "ingress controller" --repo stable`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("a search query is required")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			opts.JSON = f.WantsJSON()
			if opts.Limit < 1 {
				return cmdutil.FlagErrorf("invalid --limit %d: want 1 or more", opts.Limit)
			}
			if runF != nil {
				return runF(opts)
			}
			return searchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "search only this repository")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 30, "most results to show")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func searchRun(ctx context.Context, opts *SearchOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	results := []*client.SearchResult{}
	for r, err := range c.Search.All(ctx, opts.Query, client.SearchOptions{Repository: opts.Repo, ListOptions: client.ListOptions{Limit: min(opts.Limit, 100)}}) {
		if err != nil {
			return cmdutil.HintNotFound(fmt.Errorf("search %q: %w", opts.Query, err), cmdutil.HintRepoList)
		}
		results = append(results, r)
		if len(results) >= opts.Limit {
			break
		}
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, results)
	}
	if len(results) == 0 && opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "No charts match %q.\n", termtext.Line(opts.Query))
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	t.Header("repository", "name", "version", "app version", "description")
	t.KeepWhole(0, 1, 2)
	// On a narrow terminal the app version, then the description, go
	// first.
	t.Optional(3, 4)
	for _, r := range results {
		t.AddField(r.Repository, cs.Gray)
		t.AddField(r.Name, cs.Bold)
		t.AddField(r.Version)
		t.AddField(r.AppVersion)
		t.AddField(r.Description)
		t.EndRow()
	}
	return t.Render()
}
