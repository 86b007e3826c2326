// Package status implements `chartctl auth status`.
package status

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
)

// StatusOptions are the inputs of `auth status`.
type StatusOptions struct {
	IO      *iostreams.IOStreams
	Client  func() (*client.Client, error)
	Server  func() (string, error)
	Source  func(server string) (string, error)
	Keyring func() (*keyring.Store, error)
	JSON    bool
}

// NewCmdStatus returns the `auth status` command.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IOStreams, Client: f.Client, Server: f.Server, Keyring: f.Keyring}
	opts.Source = func(server string) (string, error) {
		ts, src, err := f.Token(context.Background(), server)
		if err != nil {
			return "", err
		}
		if ts == nil {
			return "", nil
		}
		return src, nil
	}
	return &cobra.Command{
		Use:   "status",
		Short: "Show the server, account and scopes of the credential in use",
		Example: `  chartctl auth status
  chartctl auth status --server https://charts.example.com`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
}

// status is what `auth status -o json` prints.
type status struct {
	Server     string   `json:"server"`
	User       string   `json:"user"`
	Admin      bool     `json:"admin"`
	Scopes     []string `json:"scopes"`
	Source     string   `json:"source"`
	Credential string   `json:"credential"`
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	server, err := opts.Server()
	if err != nil {
		return err
	}
	source, err := opts.Source(server)
	if err != nil {
		return err
	}
	if source == "" {
		return &cmdutil.AuthError{Err: fmt.Errorf("not logged in to %s", server)}
	}
	st := status{Server: server, Source: source, Credential: "API key or access token"}
	if source == "keyring" {
		kr, err := opts.Keyring()
		if err != nil {
			return err
		}
		cred, where, err := kr.Lookup(server)
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return err
		}
		if where != "" {
			source, st.Source = where, where
		}
		if cred != nil && cred.APIKey != "" {
			st.Credential = "API key"
		} else if cred != nil {
			st.Credential = "OAuth token"
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	me, _, err := c.Users.Me(ctx)
	if err != nil {
		return fmt.Errorf("check the credential from %s: %w", source, err)
	}
	st.User, st.Admin, st.Scopes = me.Email, me.Admin, me.Scopes
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, st)
	}
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	fmt.Fprintf(w, "%s\n", cs.Bold(server))
	role := ""
	if me.Admin {
		role = " (server admin)"
	}
	fmt.Fprintf(w, "  %s Logged in as %s%s\n", cs.SuccessIcon(), cs.Bold(termtext.Line(me.Email)), role)
	fmt.Fprintf(w, "  Credential: %s from %s\n", st.Credential, source)
	_, err = fmt.Fprintf(w, "  Scopes: %s\n", termtext.Line(strings.Join(me.Scopes, ", ")))
	return err
}
