// Package tui implements `chartctl tui`, the terminal browser.
package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/build"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/tui"
)

// TUIOptions are the inputs of `tui`.
type TUIOptions struct {
	IO     *iostreams.IOStreams
	Server func() (string, error)
	// Client builds the API client for server and says where its
	// credential comes from ("--token", "CHARTCTL_TOKEN", "keyring", or ""
	// without one); the browser's client never prints retry notices (they
	// would scramble the screen) and gives up on a long wait so the status
	// line can say how long it is.
	Client func(server string) (c *client.Client, credential string, err error)
}

// unauthorizedHint is the status line's text when the server refuses the
// credential that came from source, the same advice the other commands
// give.
func unauthorizedHint(source string) string {
	switch source {
	case "--token":
		return "the --token was refused: check it, or drop it and run chartctl login"
	case cmdutil.EnvToken:
		return cmdutil.EnvToken + " was refused: check it, or unset it and run chartctl login"
	case "":
		return "not signed in: run chartctl login"
	}
	return "your sign-in was refused (expired or revoked): run chartctl login"
}

// NewCmdTUI returns the `tui` command.
func NewCmdTUI(f *cmdutil.Factory, runF func(*TUIOptions) error) *cobra.Command {
	opts := &TUIOptions{IO: f.IOStreams, Server: f.Server}
	opts.Client = func(server string) (*client.Client, string, error) {
		ts, source, err := f.Token(context.Background(), server)
		if err != nil {
			return nil, "", err
		}
		copts := []client.Option{
			client.WithUserAgent("chartctl/" + build.Version),
			client.WithMaxRetries(2),
			client.WithMaxWait(5 * time.Second),
		}
		if f.HTTPClient != nil {
			copts = append(copts, client.WithHTTPClient(f.HTTPClient))
		}
		if ts != nil {
			copts = append(copts, client.WithTokenSource(ts))
		}
		c, err := client.New(server, copts...)
		return c, source, err
	}
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Browse repositories, charts and teams in the terminal",
		Long: `Browse repositories, charts, versions and teams in an interactive terminal
browser. It uses the same credentials as the other commands (chartctl login,
CHARTCTL_TOKEN).

Keys: Enter opens, Esc or Backspace goes back, / filters (Enter on the
repository list searches every repository), Tab switches between charts and
teams, r refreshes, ? shows help, q quits.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return tuiRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func tuiRun(ctx context.Context, opts *TUIOptions) error {
	if !opts.IO.IsStdoutTTY() || !opts.IO.IsStdinTTY() {
		return errors.New("chartctl tui needs a terminal; in scripts use repo list, chart list or search")
	}
	server, err := opts.Server()
	if err != nil {
		return err
	}
	c, source, err := opts.Client(server)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	return tui.Run(ctx, tui.NewClientAPI(c), tui.Options{
		Server:       server,
		Unauthorized: unauthorizedHint(source),
		Input:        opts.IO.In,
		Output:       opts.IO.Out,
	})
}
