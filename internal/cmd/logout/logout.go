// Package logout implements `chartctl logout`.
package logout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/config"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
)

// LogoutOptions are the inputs of `logout`.
type LogoutOptions struct {
	IO         *iostreams.IOStreams
	Config     func() (*config.Config, error)
	Keyring    func() (*keyring.Store, error)
	Server     func() (string, error)
	HTTPClient *http.Client
}

// NewCmdLogout returns the `logout` command.
func NewCmdLogout(f *cmdutil.Factory, runF func(*LogoutOptions) error) *cobra.Command {
	opts := &LogoutOptions{IO: f.IOStreams, Config: f.Config, Keyring: f.Keyring, Server: f.Server}
	return &cobra.Command{
		Use:   "logout",
		Short: "Forget the stored credential of a server",
		Long: `Forget the credential stored for the server. An OAuth refresh token is
also revoked on the server, so the session ends there too.`,
		Example: `  chartctl logout
  chartctl logout --server https://charts.example.com`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.HTTPClient = f.HTTPClient
			if opts.HTTPClient == nil {
				opts.HTTPClient = http.DefaultClient
			}
			if runF != nil {
				return runF(opts)
			}
			return logoutRun(cmd.Context(), opts)
		},
	}
}

func logoutRun(ctx context.Context, opts *LogoutOptions) error {
	server, err := opts.Server()
	if err != nil {
		return err
	}
	kr, err := opts.Keyring()
	if err != nil {
		return err
	}
	cred, err := kr.Get(server)
	if errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("not logged in to %s", server)
	}
	if err != nil {
		return err
	}
	if cred.RefreshToken != "" {
		// Best effort: the credential is forgotten locally either way.
		if err := revoke(ctx, opts.HTTPClient, server, cred.RefreshToken); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%s Could not revoke the session on the server: %v\n", opts.IO.ColorScheme().WarningIcon(), err)
		}
	}
	if err := kr.Delete(server); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("forget the credential: %w", err)
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	if cfg.CurrentServer == server {
		cfg.CurrentServer = ""
		if err := cfg.Save(); err != nil {
			return err
		}
	}
	fmt.Fprintf(opts.IO.ErrOut, "%s Logged out of %s\n", opts.IO.ColorScheme().SuccessIcon(), server)
	return nil
}

// revoke revokes a refresh token (RFC 7009) at the discovered endpoint.
func revoke(ctx context.Context, hc *http.Client, server, token string) error {
	as := cmdutil.DiscoverAuthServer(ctx, hc, server)
	form := url.Values{"token": {token}, "token_type_hint": {"refresh_token"}, "client_id": {cmdutil.OAuthClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoke: %s answered %s", as.RevocationEndpoint, resp.Status)
	}
	return nil
}
