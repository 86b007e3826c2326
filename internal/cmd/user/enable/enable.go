// Package enable implements `chartctl user enable`.
package enable

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// EnableOptions are the inputs of `user enable`.
type EnableOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Email string
}

// NewCmdEnable returns the `user enable` command.
func NewCmdEnable(f *cmdutil.Factory, runF func(*EnableOptions) error) *cobra.Command {
	opts := &EnableOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "enable EMAIL",
		Short: "Enable a disabled user again",
		Long: `Enable a disabled account: the user can sign in again. Their old API keys
and OAuth access were revoked when they were disabled and stay revoked.`,
		Example: `  chartctl user enable ada@example.com`,
		Args:    cmdutil.ExactArgs(1, "a user's email is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Email = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return enableRun(cmd.Context(), opts)
		},
	}
}

func enableRun(ctx context.Context, opts *EnableOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	disabled := false
	a, _, err := c.Users.Update(ctx, opts.Email, &client.UpdateUserRequest{Disabled: &disabled})
	if err != nil {
		return fmt.Errorf("enable user %s: %w", opts.Email, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, a)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Enabled user %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(a.Email))
	return err
}
