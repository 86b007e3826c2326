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

	ID string
}

// NewCmdRevoke returns the `api-key revoke` command.
func NewCmdRevoke(f *cmdutil.Factory, runF func(*RevokeOptions) error) *cobra.Command {
	opts := &RevokeOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke one of your API keys",
		Long:  "Revoke an API key by its id (see `chartctl api-key list`). It stops working at once.",
		Args:  cmdutil.ExactArgs(1, "an API key id is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return revokeRun(cmd.Context(), opts)
		},
	}
}

func revokeRun(ctx context.Context, opts *RevokeOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.APIKeys.Revoke(ctx, opts.ID); err != nil {
		return fmt.Errorf("revoke API key %s: %w", opts.ID, err)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Revoked API key %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.ID))
	return err
}
