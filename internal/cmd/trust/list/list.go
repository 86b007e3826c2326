// Package list implements `chartctl trust list`.
package list

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// ListOptions are the inputs of `trust list`.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Repo   string
	Org    string
}

// NewCmdList returns the `trust list` command.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:     "list (--repo R | --org O)",
		Short:   "List a repository's or organization's trust material",
		Example: "  chartctl trust list --org acme\n  chartctl trust list --repo prod-charts --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if (opts.Repo == "") == (opts.Org == "") {
				return cmdutil.FlagErrorf("give exactly one of --repo REPOSITORY and --org ORGANIZATION")
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "repository whose material to list")
	cmd.Flags().StringVar(&opts.Org, "org", "", "organization whose material to list")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	entries, _, err := c.Trust.List(ctx, client.TrustScope{Repository: opts.Repo, Organization: opts.Org})
	if err != nil {
		return fmt.Errorf("list trust entries: %w", err)
	}
	if opts.JSON {
		if entries == nil {
			entries = []*client.TrustEntry{}
		}
		return cmdutil.PrintJSON(opts.IO.Out, entries)
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintln(opts.IO.ErrOut, "No trust material; add some with: chartctl trust add NAME …")
		return err
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tIDENTITY\tADDED")
	for _, e := range entries {
		id := "-"
		if e.Kind == "cosign-keyless" {
			id = e.Issuer + " " + e.Subject
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Line(e.Name), termtext.Line(e.Kind), termtext.Line(id), e.CreatedAt.Format("2006-01-02"))
	}
	return tw.Flush()
}
