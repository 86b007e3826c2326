// Package remove implements `chartctl trust remove`.
package remove

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RemoveOptions are the inputs of `trust remove`.
type RemoveOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Name   string
	Repo   string
	Org    string
}

// NewCmdRemove returns the `trust remove` command.
func NewCmdRemove(f *cmdutil.Factory, runF func(*RemoveOptions) error) *cobra.Command {
	opts := &RemoveOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:     "remove NAME (--repo R | --org O)",
		Short:   "Remove trust material; stored versions are re-verified",
		Example: "  chartctl trust remove release --repo prod-charts",
		Args:    cmdutil.ExactArgs(1, "the trust entry's name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if (opts.Repo == "") == (opts.Org == "") {
				return cmdutil.FlagErrorf("give exactly one of --repo REPOSITORY and --org ORGANIZATION")
			}
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "repository the material belongs to")
	cmd.Flags().StringVar(&opts.Org, "org", "", "organization the material belongs to")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func removeRun(ctx context.Context, opts *RemoveOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Trust.Remove(ctx, client.TrustScope{Repository: opts.Repo, Organization: opts.Org}, opts.Name); err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("remove trust entry %s: %w", opts.Name, err), "List the entries with: chartctl trust list")
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Removed trust entry %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Name))
	return err
}
