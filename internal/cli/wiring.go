package cli

import (
	"github.com/labstack/echo/v4"
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/cmd/serve"
	tuicmd "github.com/chartctl/chartctl/internal/cmd/tui"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/oauth"
	"github.com/chartctl/chartctl/internal/web"
)

// wiring returns the hooks Main runs with. It is the one place where
// packages outside the command line are plugged in: the OAuth server's and
// dashboard's routes for `serve`, and the `tui` command.
func wiring() Hooks {
	return Hooks{
		ServeRoutes: mountOAuthAndDashboard,
		Commands:    []func(*cmdutil.Factory) *cobra.Command{newCmdTUI},
	}
}

func mountOAuthAndDashboard(e *echo.Echo, env *serve.Env) {
	var sso web.SSOOptions
	if env.OIDC != nil {
		sso = web.SSOOptions{Provider: env.OIDC, Name: env.Config.OIDCName, Key: web.SSOKey(env.OIDCClientSecret),
			Policy: app.SignInPolicy{AdminGroup: env.Config.OIDCAdminGroup}}
	}
	var directory web.LDAPOptions
	if env.LDAP != nil {
		directory = web.LDAPOptions{Provider: env.LDAP, Policy: app.SignInPolicy{AdminGroup: env.Config.LDAPAdminGroup}}
	}
	oauth.Mount(e, env.Server, env.Store, oauth.Config{
		SSO:            sso,
		LDAP:           directory,
		NoLocalSignIn:  !env.Config.LocalSignIn,
		BaseURL:        env.Config.BaseURL,
		AuthURL:        env.Config.AuthURL,
		Logger:         env.Logger,
		Now:            env.Server.Now,
		TrustedProxies: env.Server.Config.TrustedProxies,
		RateLimits:     env.Server.RateLimits,
		// serve mounts the OCI registry: chart pages offer oci:// lines.
		OCI: true,
	})
}

func newCmdTUI(f *cmdutil.Factory) *cobra.Command { return tuicmd.NewCmdTUI(f, nil) }
