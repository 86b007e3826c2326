// Package disable implements `chartctl user disable` and its inverse,
// `chartctl user enable`: one change (the account's disabled flag) in
// either direction.
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

// DisableOptions are the inputs of `user disable` and `user enable`.
type DisableOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Email string
	// Disabled is the state to set: true for disable, false for enable.
	Disabled bool
}

// NewCmdDisable returns the `user disable` command.
func NewCmdDisable(f *cmdutil.Factory, runF func(*DisableOptions) error) *cobra.Command {
	return newCmd(f, runF, true, &cobra.Command{
		Use:   "disable EMAIL",
		Short: "Disable a user: end their sessions, OAuth access and API keys at once",
		Long: `Disable an account. The user can no longer sign in, and every credential of
theirs (dashboard sessions, OAuth access and refresh tokens, API keys) stops
working at once; API keys are revoked for good, so enabling the account
again does not bring them back. You cannot disable yourself, nor the last
enabled admin.`,
		Example: `  chartctl user disable ada@example.com`,
	})
}

// NewCmdEnable returns the `user enable` command.
func NewCmdEnable(f *cmdutil.Factory, runF func(*DisableOptions) error) *cobra.Command {
	return newCmd(f, runF, false, &cobra.Command{
		Use:   "enable EMAIL",
		Short: "Enable a disabled user again",
		Long: `Enable a disabled account: the user can sign in again. Their old API keys
and OAuth access were revoked when they were disabled and stay revoked.`,
		Example: `  chartctl user enable ada@example.com`,
	})
}

func newCmd(f *cmdutil.Factory, runF func(*DisableOptions) error, disabled bool, cmd *cobra.Command) *cobra.Command {
	opts := &DisableOptions{IO: f.IOStreams, Client: f.Client, Disabled: disabled}
	cmd.Args = cmdutil.ExactArgs(1, "a user's email is required")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Email = args[0]
		opts.JSON = f.WantsJSON()
		if runF != nil {
			return runF(opts)
		}
		return disableRun(cmd.Context(), opts)
	}
	return cmd
}

func disableRun(ctx context.Context, opts *DisableOptions) error {
	verb, done := "enable", "Enabled"
	if opts.Disabled {
		verb, done = "disable", "Disabled"
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	a, _, err := c.Users.Update(ctx, opts.Email, &client.UpdateUserRequest{Disabled: &opts.Disabled})
	if err != nil {
		return fmt.Errorf("%s user %s: %w", verb, opts.Email, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, a)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s %s user %s\n", opts.IO.ColorScheme().SuccessIcon(), done, termtext.Line(a.Email))
	return err
}
