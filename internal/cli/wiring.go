package cli

// wiring returns the hooks Main runs with. It is the one place where
// packages outside the command line (the OAuth server's and dashboard's
// routes for `serve`, the `tui` command) are plugged in:
//
//	return Hooks{
//		ServeRoutes: oauth.Routes,
//		Commands:    []func(*cmdutil.Factory) *cobra.Command{tuicmd.NewCmdTUI},
//	}
func wiring() Hooks {
	return Hooks{}
}
