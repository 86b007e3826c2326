// Package revoke implements `chartctl admin scim-token revoke`.
package revoke

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// RevokeOptions are the inputs of `admin scim-token revoke`.
type RevokeOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	ID string
}

// NewCmdRevoke returns the `admin scim-token revoke` command.
func NewCmdRevoke(f *cmdutil.Factory, runF func(*RevokeOptions) error) *cobra.Command {
	opts := &RevokeOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a SCIM token: the identity provider's next SCIM request is refused",
		Example: `  chartctl admin scim-token list
  chartctl admin scim-token revoke scim_01M8J3SJN96K5M5DGYEM7MV8ZR`,
		Args: cmdutil.ExactArgs(1, "the token's id is required (see `chartctl admin scim-token list`)"),
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
	if _, err := c.Admin.RevokeSCIMToken(ctx, opts.ID); err != nil {
		return fmt.Errorf("revoke SCIM token %s: %w", opts.ID, err)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Revoked SCIM token %s\n", opts.IO.ColorScheme().SuccessIcon(), opts.ID)
	return err
}
