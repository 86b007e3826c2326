// Package cli builds the chartctl root command and decides, in one place,
// how errors map to exit codes and how they are shown.
package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/build"
	admincmd "github.com/chartctl/chartctl/internal/cmd/admin"
	apikeycmd "github.com/chartctl/chartctl/internal/cmd/apikey"
	auditcmd "github.com/chartctl/chartctl/internal/cmd/audit"
	authcmd "github.com/chartctl/chartctl/internal/cmd/auth"
	chartcmd "github.com/chartctl/chartctl/internal/cmd/chart"
	completioncmd "github.com/chartctl/chartctl/internal/cmd/completion"
	importcmd "github.com/chartctl/chartctl/internal/cmd/import"
	logincmd "github.com/chartctl/chartctl/internal/cmd/login"
	logoutcmd "github.com/chartctl/chartctl/internal/cmd/logout"
	mancmd "github.com/chartctl/chartctl/internal/cmd/man"
	orgcmd "github.com/chartctl/chartctl/internal/cmd/org"
	ratelimitcmd "github.com/chartctl/chartctl/internal/cmd/ratelimit"
	replicationcmd "github.com/chartctl/chartctl/internal/cmd/replication"
	repocmd "github.com/chartctl/chartctl/internal/cmd/repo"
	robotcmd "github.com/chartctl/chartctl/internal/cmd/robot"
	searchcmd "github.com/chartctl/chartctl/internal/cmd/search"
	"github.com/chartctl/chartctl/internal/cmd/serve"
	teamcmd "github.com/chartctl/chartctl/internal/cmd/team"
	trustcmd "github.com/chartctl/chartctl/internal/cmd/trust"
	usercmd "github.com/chartctl/chartctl/internal/cmd/user"
	versioncmd "github.com/chartctl/chartctl/internal/cmd/version"
	webhookcmd "github.com/chartctl/chartctl/internal/cmd/webhook"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/termquiet"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Hooks add to the command line what is built outside this package: the
// routes `serve` mounts (OAuth, dashboard) and extra commands (`tui`).
type Hooks struct {
	// ServeRoutes is passed to serve.NewCmdServe.
	ServeRoutes func(e *echo.Echo, env *serve.Env)
	// Commands are added to the root command; each receives the Factory.
	Commands []func(f *cmdutil.Factory) *cobra.Command
}

// Main runs the command line on the process's streams, arguments and
// environment, and returns the exit code.
func Main() int {
	return MainWith(wiring())
}

// MainWith is Main with the given hooks.
func MainWith(h Hooks) int {
	termquiet.Restore()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f := cmdutil.New(iostreams.System(), os.Getenv)
	return Run(ctx, f, h, os.Args[1:])
}

// Run executes args with f and returns the exit code. Errors are printed
// on f.IOStreams.ErrOut: usage errors with a pointer to --help (exit 2),
// API errors with the server's message and request id (exit 1), and
// authentication failures with a hint to run `chartctl login`.
func Run(ctx context.Context, f *cmdutil.Factory, h Hooks, args []string) int {
	root := NewRootCmd(f, h)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		err = unknownSubcommand(cmd)
	}
	if err == nil {
		return ExitOK
	}
	return printError(f, root, cmd, err)
}

func printError(f *cmdutil.Factory, root, cmd *cobra.Command, err error) int {
	code := printErrorOnly(f, root, cmd, err)
	var hint *cmdutil.HintError
	if errors.As(err, &hint) && hint.Hint != "" {
		fmt.Fprintln(f.IOStreams.ErrOut, termtext.Sanitize(hint.Hint))
	}
	return code
}

func printErrorOnly(f *cmdutil.Factory, root, cmd *cobra.Command, err error) int {
	stderr := f.IOStreams.ErrOut
	cs := f.IOStreams.ColorScheme()
	if cmd == nil {
		cmd = root
	}
	var flagErr *cmdutil.FlagError
	var authErr *cmdutil.AuthError
	var apiErr *client.Error
	var opErr *net.OpError
	var urlErr *url.Error
	var notAPI *client.NotAPIError
	switch {
	case errors.Is(err, cmdutil.ErrSilent):
		return ExitError
	case errors.Is(err, cmdutil.ErrCancel):
		return ExitError
	case errors.As(err, &flagErr) || isCobraUsageError(err):
		fmt.Fprintf(stderr, "error: %s\n", termtext.Sanitize(err.Error()))
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return ExitUsage
	case errors.As(err, &authErr) || (errors.As(err, &apiErr) && apiErr.StatusCode == 401):
		fmt.Fprintf(stderr, "error: %s\n", termtext.Sanitize(errorMessage(err)))
		server, _ := f.Server()
		var hint *cmdutil.HintError
		switch {
		case errors.As(err, &hint):
			// The command's own hint (printed by printError) fits better.
		case f.Flags.Token != "":
			fmt.Fprintln(stderr, "The token given with --token was refused; check it, or drop --token and run `chartctl login`.")
		case f.Getenv(cmdutil.EnvToken) != "":
			fmt.Fprintf(stderr, "The token in %s was refused; check it, or unset it and run `chartctl login`.\n", cmdutil.EnvToken)
		default:
			fmt.Fprintf(stderr, "To sign in, run: %s\n", cs.Bold("chartctl login --server "+server))
		}
		return ExitError
	case errors.As(err, &apiErr):
		fmt.Fprintf(stderr, "error: %s\n", termtext.Sanitize(errorMessage(err)))
		if apiErr.RequestID != "" {
			fmt.Fprintf(stderr, "request id: %s\n", termtext.Line(apiErr.RequestID))
		}
		if apiErr.StatusCode == 429 && apiErr.RetryAfter > 0 {
			fmt.Fprintf(stderr, "The rate limit resets in %s; see `chartctl rate-limit`.\n", apiErr.RetryAfter)
		} else if apiErr.StatusCode >= 500 && apiErr.RetryAfter > 0 {
			// A wait too long to sleep through (CONTRACT §10): say it.
			fmt.Fprintf(stderr, "The server asks to retry in %s.\n", apiErr.RetryAfter)
		}
		if apiErr.StatusCode == http.StatusForbidden && !strings.Contains(apiErr.Message, "chartctl ") {
			// A refusal whose message names a command already says what to
			// do next (a read-only mirror: `chartctl repo sync`; too many
			// keys: `chartctl api-key revoke`); the others may be the
			// wrong credential.
			fmt.Fprintln(stderr, "To see the account and scopes of the credential in use, run: chartctl auth status")
		}
		return ExitError
	case errors.As(err, &opErr) && opErr.Op != "listen":
		// A client's failure to reach the server; `serve` failing to
		// listen is said as it is, below.
		fmt.Fprintf(stderr, "error: cannot reach %s: %s\n", serverOf(f), termtext.Sanitize(opErr.Err.Error()))
		fmt.Fprintln(stderr, serverHint(f, "Check that the server is running and the address is right"))
		return ExitError
	case errors.As(err, &notAPI):
		kind := "a web page"
		if !strings.HasPrefix(notAPI.ContentType, "text/html") {
			kind = "something else"
		}
		fmt.Fprintf(stderr, "error: cannot talk to %s: it answered with %s (%s), not the chartctl API\n", serverOf(f), kind, termtext.Line(notAPI.ContentType))
		fmt.Fprintln(stderr, serverHint(f, "Check that the address is the chartctl server's own (no path such as /helm or /v1)"))
		return ExitError
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "interrupted")
		return ExitError
	case errors.As(err, &urlErr):
		// A transport failure other than a refused or unresolvable address
		// (TLS, a plain-HTTP answer to https://): its own text repeats the
		// URL, so name the server once and say what went wrong.
		fmt.Fprintf(stderr, "error: cannot talk to %s: %s\n", serverOf(f), termtext.Sanitize(urlErr.Err.Error()))
		fmt.Fprintln(stderr, serverHint(f, "Check the address, http:// or https://"))
		return ExitError
	}
	fmt.Fprintf(stderr, "error: %s\n", termtext.Sanitize(err.Error()))
	return ExitError
}

func serverOf(f *cmdutil.Factory) string {
	server, err := f.Server()
	if err != nil {
		return "the server"
	}
	return server
}

// serverHint says what to check, and where the server address came from;
// a new user who never named one learns that a default was tried.
func serverHint(f *cmdutil.Factory, check string) string {
	switch {
	case f.Flags.Server != "":
		return check + "; the address came from --server."
	case f.Getenv(cmdutil.EnvServer) != "":
		return check + "; the address came from " + cmdutil.EnvServer + "."
	}
	if c, err := f.Config(); err == nil && c.CurrentServer != "" {
		return check + "; it is the server of your last login. Name another with --server or " + cmdutil.EnvServer + "."
	}
	return "No server was named, so chartctl tried " + cmdutil.DefaultServer + ". Name yours with --server or " + cmdutil.EnvServer + ", or start one with: chartctl serve"
}

// errorMessage is the message of an error chain, with an API error in it
// shown by its message and status alone (the request id gets a line of its
// own): "create repository stable: the name is taken (HTTP 409)".
func errorMessage(err error) string {
	full := err.Error()
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		return full
	}
	msg := apiErr.Message
	if msg == "" {
		msg = http.StatusText(apiErr.StatusCode)
	}
	short := fmt.Sprintf("%s (HTTP %d)", msg, apiErr.StatusCode)
	if prefix, ok := strings.CutSuffix(full, apiErr.Error()); ok {
		return prefix + short
	}
	return short
}

// isCobraUsageError recognizes the errors cobra returns for an unknown
// command, which it does not type.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command ") || strings.HasPrefix(msg, "required flag") ||
		strings.HasPrefix(msg, "if any flags in the group") || strings.HasPrefix(msg, "invalid argument ")
}

// unknownSubcommand returns the usage error of a command group (repo,
// chart, user, ...) run with an argument that names none of its
// subcommands, nil otherwise. Cobra checks this for the root command
// only: for a group it prints the group's help and succeeds, so a
// mistyped `chartctl repo crate x` in a CI step would pass.
func unknownSubcommand(cmd *cobra.Command) error {
	if cmd == nil || !cmd.HasParent() || cmd.Runnable() || !cmd.HasSubCommands() {
		return nil
	}
	args := cmd.Flags().Args()
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // as cobra does for the root
	}
	if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t") + "\n"
	}
	return &cmdutil.FlagError{Err: errors.New(msg)}
}

// NewRootCmd builds the command tree over f.
func NewRootCmd(f *cmdutil.Factory, h Hooks) *cobra.Command {
	root := &cobra.Command{
		Use:   "chartctl <command> <subcommand> [flags]",
		Short: "A Helm chart repository: server, CLI and terminal browser",
		Long: `chartctl is a self-hostable Helm chart repository and its command line.

Run a server with 'chartctl serve', sign in with 'chartctl login', then
create repositories and push charts. In CI, set CHARTCTL_SERVER and
CHARTCTL_TOKEN (an API key) instead of signing in.`,
		Example: `  chartctl login --server https://charts.example.com
  chartctl repo create stable --description "Stable charts"
  chartctl chart push ./mychart --repo stable
  chartctl chart list --repo stable`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       build.Version,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			switch f.Flags.Output {
			case "", cmdutil.OutputTable, cmdutil.OutputJSON:
			default:
				return cmdutil.FlagErrorf("invalid value %q for --output: want table or json", f.Flags.Output)
			}
			if f.Flags.MaxRetries < 0 {
				return cmdutil.FlagErrorf("invalid value %d for --max-retries: want 0 or more", f.Flags.MaxRetries)
			}
			return nil
		},
	}
	ios := f.IOStreams
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	root.SetVersionTemplate(versioncmd.String() + "\n")

	pf := root.PersistentFlags()
	pf.StringVar(&f.Flags.Server, "server", "", "server URL (default: $CHARTCTL_SERVER, else the server of the last login, else "+cmdutil.DefaultServer+")")
	pf.StringVarP(&f.Flags.Output, "output", "o", "", "output format: table or json (default: table on a terminal, json otherwise)")
	pf.StringVar(&f.Flags.Token, "token", "", "API key or access token (default: $CHARTCTL_TOKEN, else the stored credential)")
	pf.IntVar(&f.Flags.MaxRetries, "max-retries", client.DefaultMaxRetries, "how many times to retry a request on 429, 5xx or a dropped connection")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{cmdutil.OutputTable, cmdutil.OutputJSON}, cobra.ShellCompDirectiveNoFileComp))

	root.AddGroup(
		&cobra.Group{ID: "core", Title: "Repositories and charts:"},
		&cobra.Group{ID: "account", Title: "Accounts and access:"},
		&cobra.Group{ID: "server", Title: "Server and tools:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("core",
		repocmd.NewCmdRepo(f),
		chartcmd.NewCmdChart(f),
		searchcmd.NewCmdSearch(f, nil),
		webhookcmd.NewCmdWebhook(f),
		replicationcmd.NewCmdReplication(f),
		importcmd.NewCmdImport(f, nil),
	)
	add("account",
		logincmd.NewCmdLogin(f, nil),
		logoutcmd.NewCmdLogout(f, nil),
		authcmd.NewCmdAuth(f),
		teamcmd.NewCmdTeam(f),
		orgcmd.NewCmdOrg(f),
		robotcmd.NewCmdRobot(f),
		trustcmd.NewCmdTrust(f),
		apikeycmd.NewCmdAPIKey(f),
		usercmd.NewCmdUser(f),
		ratelimitcmd.NewCmdRateLimit(f, nil),
		auditcmd.NewCmdAudit(f, nil),
	)
	add("server",
		serve.NewCmdServe(ios.ErrOut, h.ServeRoutes, nil),
		admincmd.NewCmdAdmin(f),
		versioncmd.NewCmdVersion(f),
		completioncmd.NewCmdCompletion(f),
		mancmd.NewCmdMan(),
	)
	for _, c := range h.Commands {
		add("server", c(f))
	}
	root.SetHelpCommandGroupID("server")
	// A group given an unknown subcommand prints no help: Run reports
	// the usage error (unknownSubcommand).
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		if unknownSubcommand(cmd) != nil {
			return
		}
		help(cmd, args)
	})
	wrapArgs(root)
	return root
}

// wrapArgs turns the argument errors of every command into usage errors.
func wrapArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
	if c.Args == nil {
		return
	}
	args := c.Args
	c.Args = func(cmd *cobra.Command, a []string) error {
		if err := args(cmd, a); err != nil {
			var fe *cmdutil.FlagError
			if errors.As(err, &fe) {
				return err
			}
			return &cmdutil.FlagError{Err: err}
		}
		return nil
	}
}
