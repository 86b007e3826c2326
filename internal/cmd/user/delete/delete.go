// Package delete implements `chartctl user delete`.
package delete

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DeleteOptions are the inputs of `user delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	Email string
	Yes   bool
	// JSON prints the outcome as JSON (-o json, or off a terminal).
	JSON bool
}

// NewCmdDelete returns the `user delete` command.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete EMAIL",
		Short: "Delete a user, their memberships and credentials",
		Long: `Delete an account. Their team memberships, dashboard sessions, OAuth access
and API keys go at once. Repositories they own personally stay (server
admins can still read and delete them). You cannot delete yourself, nor the
last enabled admin. On a terminal you are asked to type the email to
confirm; elsewhere --yes is required.`,
		Example: `  chartctl user delete ada@example.com
  chartctl user delete ada@example.com --yes`,
		Args: cmdutil.ExactArgs(1, "a user's email is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Email = args[0]
			opts.JSON = f.WantsJSON()
			if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if !opts.Yes {
		if err := cmdutil.ConfirmByName(ctx, opts.IO, "user "+termtext.Line(opts.Email), opts.Email); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Users.Delete(ctx, opts.Email); err != nil {
		return fmt.Errorf("delete user %s: %w", opts.Email, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"email": opts.Email, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted user %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Email))
	return err
}
