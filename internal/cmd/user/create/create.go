// Package create implements `chartctl user create`.
package create

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// CreateOptions are the inputs of `user create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Email         string
	Admin         bool
	PasswordStdin bool
}

// NewCmdCreate returns the `user create` command.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "create EMAIL [--admin] [--password-stdin]",
		Short: "Create a user account",
		Long: `Create an account for EMAIL (POST /v1/users). With --password-stdin its
dashboard password (8 to 72 characters) is read from the first line of
standard input; without it the account has no password, as a service
account for API keys ('chartctl api-key create' as that user, or the
dashboard) needs none: set one later with 'chartctl user reset-password'.
--admin makes the user a server admin.`,
		Example: `  printf '%s\n' "$PASSWORD" | chartctl user create ada@example.com --password-stdin
  chartctl user create ci-bot@example.com
  chartctl user create ops@example.com --admin --password-stdin < password.txt`,
		Args: cmdutil.ExactArgs(1, "the new user's email is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Email = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Admin, "admin", false, "make the user a server admin")
	cmd.Flags().BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the user's password from standard input")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	req := &client.CreateUserRequest{Email: opts.Email, Admin: opts.Admin}
	if opts.PasswordStdin {
		pw, err := cmdutil.ReadStdinPassword(opts.IO.In)
		if err != nil {
			return err
		}
		req.Password = pw
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	u, _, err := c.Users.Create(ctx, req)
	if err != nil {
		return fmt.Errorf("create user %s: %w", opts.Email, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, u)
	}
	role := "user"
	if u.Admin {
		role = "server admin"
	}
	out := opts.IO.Out
	fmt.Fprintf(out, "%s Created %s %s\n", opts.IO.ColorScheme().SuccessIcon(), role, termtext.Line(u.Email))
	if !opts.PasswordStdin {
		_, err = fmt.Fprintf(out, "  no password: set one with 'chartctl user reset-password %s'\n", termtext.Line(u.Email))
	}
	return err
}
