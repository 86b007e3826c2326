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
	// Filters are the search filters (--image, --org, --category,
	// --license, --keyword, --deprecated, --signed, --kube-version).
	Filters client.SearchOptions
}

// NewCmdSearch returns the `search` command.
func NewCmdSearch(f *cmdutil.Factory, runF func(*SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{IO: f.IOStreams, Client: f.Client, Table: f.NewTable}
	var signed bool
	cmd := &cobra.Command{
		Use:   "search [QUERY] [--image I] [--kube-version V] [--deprecated] ...",
		Short: "Search charts by name, description, keywords, images and more",
		Long: `Search the charts of every repository you can read (or of --repo) by
name, description and keywords. Each chart is shown once, at its newest
stable version; name matches come first.

--image finds every version (not only the newest) that deploys an image:
without a tag, any tag; with a tag, that tag and those it prefixes before
a "." or "-" (nginx:1.25 finds nginx:1.25.3); docker.io/library/ is
implied as Docker does. Deprecated charts are hidden unless --deprecated,
as helm search hides them. --kube-version keeps charts whose kubeVersion
allows that Kubernetes version. --signed keeps versions whose signature
verified against the repository's trust (--signed=false: the others).
QUERY may be left out when a filter is given.`,
		Example: `  chartctl search nginx
  chartctl search "ingress controller" --repo stable
  chartctl search --image nginx:1.25
  chartctl search redis --kube-version 1.31 --category database --deprecated
  chartctl search --signed --org acme`,
		Args: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if len(args) == 0 && !fl.Changed("image") && !fl.Changed("org") && !fl.Changed("category") && !fl.Changed("license") &&
				!fl.Changed("keyword") && !fl.Changed("kube-version") && !fl.Changed("repo") && !fl.Changed("signed") {
				return cmdutil.FlagErrorf("a search query or a filter (--image, --kube-version, --category, --license, --keyword, --signed, --org, --repo) is required")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			if cmd.Flags().Changed("signed") {
				opts.Filters.Signed = &signed
			}
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
	cmd.Flags().StringVar(&opts.Filters.Image, "image", "", "versions that deploy this image (nginx, nginx:1.25, ghcr.io/org/app:v1)")
	cmd.Flags().StringVar(&opts.Filters.Organization, "org", "", "only repositories of this organization")
	cmd.Flags().StringVar(&opts.Filters.Category, "category", "", "only charts of this artifacthub.io/category")
	cmd.Flags().StringVar(&opts.Filters.License, "license", "", "only charts of this artifacthub.io/license (Apache-2.0)")
	cmd.Flags().StringVar(&opts.Filters.Keyword, "keyword", "", "only charts with this keyword")
	cmd.Flags().StringVar(&opts.Filters.KubeVersion, "kube-version", "", "only charts whose kubeVersion allows this Kubernetes version (1.31)")
	cmd.Flags().BoolVar(&opts.Filters.Deprecated, "deprecated", false, "include deprecated charts (hidden by default)")
	cmd.Flags().BoolVar(&signed, "signed", false, "only versions whose signature verified (--signed=false: only the others)")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func searchRun(ctx context.Context, opts *SearchOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	results := []*client.SearchResult{}
	so := opts.Filters
	so.Repository = opts.Repo
	so.ListOptions = client.ListOptions{Limit: min(opts.Limit, 100)}
	for r, err := range c.Search.All(ctx, opts.Query, so) {
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
		if opts.Query != "" {
			fmt.Fprintf(opts.IO.ErrOut, "No charts match %q.\n", termtext.Line(opts.Query))
		} else {
			fmt.Fprintln(opts.IO.ErrOut, "No charts match these filters.")
		}
		return nil
	}
	cs := opts.IO.ColorScheme()
	t := opts.Table()
	header := []string{"repository", "name", "version", "app version", "description"}
	if opts.Filters.Image != "" {
		// What matched is the point of an image search.
		header[4] = "images"
	}
	t.Header(header...)
	t.KeepWhole(0, 1, 2)
	// On a narrow terminal the app version, then the description, go
	// first.
	t.Optional(3, 4)
	for _, r := range results {
		t.AddField(r.Repository, cs.Gray)
		t.AddField(r.Name, cs.Bold)
		t.AddField(r.Version)
		t.AddField(r.AppVersion)
		if opts.Filters.Image != "" {
			t.AddField(strings.Join(r.Images, " "))
		} else {
			t.AddField(r.Description)
		}
		t.EndRow()
	}
	return t.Render()
}
