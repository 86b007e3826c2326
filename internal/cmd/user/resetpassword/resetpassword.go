// Package resetpassword implements `chartctl user reset-password`.
package resetpassword

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// ResetPasswordOptions are the inputs of `user reset-password`.
type ResetPasswordOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Email         string
	PasswordStdin bool
}

// NewCmdResetPassword returns the `user reset-password` command.
func NewCmdResetPassword(f *cmdutil.Factory, runF func(*ResetPasswordOptions) error) *cobra.Command {
	opts := &ResetPasswordOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "reset-password EMAIL",
		Short: "Set a new dashboard password for a user",
		Long: `Set a user's dashboard password. With --password-stdin the new password
(8 to 72 characters) is read from the first line of standard input;
otherwise a random one is generated and printed this once: hand it over
through a safe channel.`,
		Example: `  chartctl user reset-password ada@example.com
  printf '%s\n' "$NEW_PASSWORD" | chartctl user reset-password ada@example.com --password-stdin`,
		Args: cmdutil.ExactArgs(1, "a user's email is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Email = args[0]
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return resetRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the new password from standard input")
	return cmd
}

// alphabet avoids characters people confuse (0/O, 1/l/I).
const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// Generate returns a random password of 20 characters (about 116 bits).
func Generate() string {
	b := make([]byte, 20)
	out := make([]byte, len(b))
	for i := range out {
		for {
			if _, err := rand.Read(b[i : i+1]); err != nil {
				panic(err) // crypto/rand never fails on supported platforms
			}
			if int(b[i]) < 256-256%len(alphabet) {
				break
			}
		}
		out[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(out)
}

func resetRun(ctx context.Context, opts *ResetPasswordOptions) error {
	password, generated := "", false
	if opts.PasswordStdin {
		var err error
		if password, err = cmdutil.ReadStdinPassword(opts.IO.In); err != nil {
			return err
		}
	} else {
		password, generated = Generate(), true
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	a, _, err := c.Users.Update(ctx, opts.Email, &client.UpdateUserRequest{Password: &password})
	if err != nil {
		return fmt.Errorf("reset password of %s: %w", opts.Email, err)
	}
	if opts.JSON {
		out := map[string]any{"email": a.Email}
		if generated {
			out["password"] = password
		}
		return cmdutil.PrintJSON(opts.IO.Out, out)
	}
	cs := opts.IO.ColorScheme()
	if !generated {
		_, err = fmt.Fprintf(opts.IO.Out, "%s Set a new password for %s\n", cs.SuccessIcon(), termtext.Line(a.Email))
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "%s Set a new password for %s. It is shown this once:\n", cs.SuccessIcon(), termtext.Line(a.Email))
	_, err = fmt.Fprintln(opts.IO.Out, password)
	return err
}
