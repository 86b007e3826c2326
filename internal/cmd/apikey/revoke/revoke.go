// Package revoke implements `chartctl api-key revoke`.
package revoke

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RevokeOptions are the inputs of `api-key revoke`.
type RevokeOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	ID  string
	Yes bool
	// JSON prints the outcome as JSON (-o json, or off a terminal).
	JSON bool
}

// NewCmdRevoke returns the `api-key revoke` command.
func NewCmdRevoke(f *cmdutil.Factory, runF func(*RevokeOptions) error) *cobra.Command {
	opts := &RevokeOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke one of your API keys",
		Long: `Revoke an API key by its id (see 'chartctl api-key list'). It stops
working at once, for every script and CI job that uses it. On a terminal
you are asked to confirm; elsewhere --yes is required.`,
		Example: `  chartctl api-key list
  chartctl api-key revoke key_01M80A3NNTTBZK3HHA5SK26SXB
  chartctl api-key revoke key_01M80A3NNTTBZK3HHA5SK26SXB --yes`,
		Args: cmdutil.ExactArgs(1, "an API key id is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			opts.JSON = f.WantsJSON()
			if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return revokeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "revoke without asking")
	return cmd
}

func revokeRun(ctx context.Context, opts *RevokeOptions) error {
	if !opts.Yes {
		q := fmt.Sprintf("Revoke API key %s? Anything using it stops working.", termtext.Line(opts.ID))
		if err := cmdutil.Confirm(ctx, opts.IO, q, "Not revoked"); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.APIKeys.Revoke(ctx, opts.ID); err != nil {
		return fmt.Errorf("revoke API key %s: %w", opts.ID, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"id": opts.ID, "revoked": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Revoked API key %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.ID))
	return err
}
