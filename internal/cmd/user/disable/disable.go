// Package disable implements `chartctl user disable`.
package disable

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DisableOptions are the inputs of `user disable`.
type DisableOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Email string
}

// NewCmdDisable returns the `user disable` command.
func NewCmdDisable(f *cmdutil.Factory, runF func(*DisableOptions) error) *cobra.Command {
	opts := &DisableOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "disable EMAIL",
		Short: "Disable a user: end their sessions, OAuth access and API keys at once",
		Long: `Disable an account. The user can no longer sign in, and every credential of
theirs (dashboard sessions, OAuth access and refresh tokens, API keys) stops
working at once; API keys are revoked for good, so enabling the account
again does not bring them back. You cannot disable yourself, nor the last
enabled admin.`,
		Example: `  chartctl user disable ada@example.com`,
		Args:    cmdutil.ExactArgs(1, "a user's email is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Email = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return disableRun(cmd.Context(), opts)
		},
	}
}

func disableRun(ctx context.Context, opts *DisableOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	disabled := true
	a, _, err := c.Users.Update(ctx, opts.Email, &client.UpdateUserRequest{Disabled: &disabled})
	if err != nil {
		return fmt.Errorf("disable user %s: %w", opts.Email, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, a)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Disabled user %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(a.Email))
	return err
}
