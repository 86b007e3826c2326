// Package login implements `chartctl login`: the OAuth 2.0 authorization
// code flow with PKCE (S256) and state over a loopback redirect (RFC 8252),
// or an API key read from standard input.
package login

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/browser"
	"github.com/chartctl/chartctl/internal/cmd/apikey/create"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/config"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
	"github.com/chartctl/chartctl/internal/oidcauth"
)

// DefaultTimeout is how long login waits for the browser to come back.
const DefaultTimeout = 5 * time.Minute

// LoginOptions are the inputs of `login`.
type LoginOptions struct {
	IO         *iostreams.IOStreams
	Config     func() (*config.Config, error)
	Keyring    func() (*keyring.Store, error)
	Server     func() (string, error)
	Browser    browser.Opener
	HTTPClient *http.Client
	Timeout    time.Duration

	Scopes    []string
	NoBrowser bool
	WithToken bool
	// Device signs in with the device authorization grant (RFC 8628):
	// a code to enter in a browser anywhere, for machines without one.
	Device bool

	// OIDC, when set, signs in with a CI job's OIDC token exchanged for a
	// robot's short-lived credential (trusted publishing).
	OIDC func(ctx context.Context, server string) (*oidcauth.Credential, string, error)
	// OIDCTokenFile, OIDCAudience and Robot are --oidc-token-file,
	// --oidc-audience and --robot.
	OIDCTokenFile string
	OIDCAudience  string
	Robot         string
}

// NewCmdLogin returns the `login` command.
func NewCmdLogin(f *cmdutil.Factory, runF func(*LoginOptions) error) *cobra.Command {
	opts := &LoginOptions{
		IO:      f.IOStreams,
		Config:  f.Config,
		Keyring: f.Keyring,
		Server:  f.Server,
		Browser: f.Browser,
		Timeout: DefaultTimeout,
	}
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Sign in to a chartctl server",
		Long: `Sign in to a chartctl server in your browser. chartctl listens on a
loopback port for the browser to come back, exchanges the code it receives
(OAuth 2.0 with PKCE), and stores the tokens in your system keyring, or
where there is none, in a file only you can read. Expired access tokens are
refreshed without asking.

By default chartctl asks for every scope but admin: reading and writing
repositories, teams and organizations, and keys:write so that
"chartctl api-key create" works. Server admins who want the admin commands
(users, other users' keys, OAuth clients) add admin:
"chartctl login --scopes repo:read,repo:write,team:read,team:write,org:read,org:write,keys:write,admin".

With --device, chartctl prints an address and a short code instead; open
the address in a browser on any device (a laptop, a phone), sign in there
(single sign-on included), enter the code and approve. chartctl polls the
server until then. Use it where no browser runs or the browser cannot reach
this machine's loopback port: SSH sessions, containers, remote shells.

With --with-token, an API key is read from standard input instead.

In CI, with --oidc-token-file FILE, or CHARTCTL_OIDC_TOKEN, or in a GitHub
Actions job with "permissions: id-token: write", the job's OIDC ID token is
exchanged for a short-lived credential (15 minutes) of the robot account
whose trusted publisher accepts it: no secret is stored in the CI system
(see docs/ci.md). The credential is kept for its lifetime, so the commands
that follow use it.`,
		Example: `  chartctl login --server https://charts.example.com
  chartctl login --no-browser
  chartctl login --device --server https://charts.example.com
  chartctl login --scopes repo:read,repo:write,team:read,team:write,org:read,org:write,keys:write,admin
  echo "$KEY" | chartctl login --with-token --server https://charts.example.com
  chartctl login --server https://charts.example.com --oidc-token-file "$CI_JOB_JWT_FILE"`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.HTTPClient = f.HTTPClient
			if opts.HTTPClient == nil {
				opts.HTTPClient = http.DefaultClient
			}
			if opts.WithToken && (cmd.Flags().Changed("scopes") || opts.NoBrowser || opts.Device) {
				return cmdutil.FlagErrorf("--with-token cannot be combined with --scopes, --no-browser or --device")
			}
			if opts.Device && opts.NoBrowser {
				return cmdutil.FlagErrorf("--device never opens a browser: drop --no-browser")
			}
			src := f.OIDCSource(opts.OIDCTokenFile, opts.OIDCAudience)
			if opts.OIDCTokenFile != "" && (opts.WithToken || cmd.Flags().Changed("scopes") || opts.NoBrowser || opts.Device) {
				return cmdutil.FlagErrorf("--oidc-token-file cannot be combined with --with-token, --scopes, --no-browser or --device")
			}
			if (opts.Robot != "" || opts.OIDCAudience != "") && !src.Available() {
				return cmdutil.FlagErrorf("--robot and --oidc-audience need an OIDC token: --oidc-token-file, %s, or a GitHub Actions job with id-token: write", oidcauth.EnvToken)
			}
			if opts.Robot != "" && strings.Count(opts.Robot, "/") != 1 {
				return cmdutil.FlagErrorf("invalid --robot %q: use ORG/NAME", opts.Robot)
			}
			if !opts.WithToken && !cmd.Flags().Changed("scopes") && !opts.NoBrowser && !opts.Device && src.Available() {
				opts.OIDC = func(ctx context.Context, server string) (*oidcauth.Credential, string, error) {
					cred, err := f.ExchangeOIDC(ctx, server, opts.Robot, src)
					return cred, src.Describe(), err
				}
			}
			for _, s := range opts.Scopes {
				if !isScope(s) {
					return cmdutil.FlagErrorf("invalid scope %q: want one of %s", s, strings.Join(create.Scopes, ", "))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return loginRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Scopes, "scopes", create.LoginScopes, "scopes to ask for (add admin for the server-admin commands)")
	cmd.Flags().BoolVar(&opts.NoBrowser, "no-browser", false, "print the sign-in URL instead of opening a browser")
	cmd.Flags().BoolVar(&opts.WithToken, "with-token", false, "read an API key from standard input")
	cmd.Flags().BoolVar(&opts.Device, "device", false, "sign in with a code entered in a browser on any device (no local browser needed)")
	cmd.Flags().StringVar(&opts.OIDCTokenFile, "oidc-token-file", "", "exchange the CI job's OIDC ID token in FILE for a robot's short-lived credential (trusted publishing)")
	cmd.Flags().StringVar(&opts.OIDCAudience, "oidc-audience", "", "audience to ask GitHub Actions' token for (default $CHARTCTL_OIDC_AUDIENCE, else the server URL)")
	cmd.Flags().StringVar(&opts.Robot, "robot", "", "ORG/NAME of the robot, when the OIDC token matches trusted publishers of several")
	_ = cmd.RegisterFlagCompletionFunc("scopes", cobra.FixedCompletions(create.Scopes, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	return cmd
}

func isScope(s string) bool {
	for _, v := range create.Scopes {
		if s == v {
			return true
		}
	}
	return false
}

func loginRun(ctx context.Context, opts *LoginOptions) error {
	server, err := opts.Server()
	if err != nil {
		return err
	}
	var cred *keyring.Credential
	if opts.OIDC != nil {
		return oidcLogin(ctx, opts, server)
	}
	if opts.WithToken {
		cred, err = readToken(opts.IO.In)
		if err != nil {
			return err
		}
	} else if opts.Device {
		cred, err = deviceAuthorize(ctx, opts, server)
		if err != nil {
			return err
		}
	} else {
		cred, err = authorize(ctx, opts, server)
		if err != nil {
			return err
		}
	}
	// Check the credential and learn whose it is.
	c, err := client.New(server, client.WithHTTPClient(opts.HTTPClient), client.WithToken(bearer(cred)))
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	me, _, err := c.Users.Me(ctx)
	if err != nil {
		if client.IsUnauthorized(err) && opts.WithToken {
			// Telling someone who is running `chartctl login` to run it
			// would go in circles: the key itself is the problem.
			return &cmdutil.HintError{
				Err:  &cmdutil.AuthError{Err: fmt.Errorf("%s did not accept the API key: %w", server, err)},
				Hint: "Check the key given on standard input (it is shown once, when created), or create a new one on " + server + "/settings/api-keys.",
			}
		}
		if client.IsUnauthorized(err) {
			return &cmdutil.AuthError{Err: fmt.Errorf("%s did not accept the credential: %w", server, err)}
		}
		return fmt.Errorf("check the credential: %w", err)
	}
	cred.User = me.Email
	kr, err := opts.Keyring()
	if err != nil {
		return err
	}
	where, err := kr.Set(server, cred)
	if err != nil {
		return fmt.Errorf("store the credential: %w", err)
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	cfg.CurrentServer = server
	if err := cfg.Save(); err != nil {
		return err
	}
	cs := opts.IO.ColorScheme()
	if where == "keyring" {
		where = "the system keyring"
	}
	fmt.Fprintf(opts.IO.ErrOut, "%s Logged in to %s as %s (credentials stored in %s)\n",
		cs.SuccessIcon(), server, cs.Bold(termtext.Line(me.Email)), where)
	return nil
}

// oidcLogin exchanges the CI job's OIDC token and stores the robot's
// credential, with its expiry, as the server's.
func oidcLogin(ctx context.Context, opts *LoginOptions, server string) error {
	ex, from, err := opts.OIDC(ctx, server)
	if err != nil {
		return err
	}
	cred := &keyring.Credential{APIKey: ex.Token, Expiry: ex.Expiry}
	c, err := client.New(server, client.WithHTTPClient(opts.HTTPClient), client.WithToken(ex.Token))
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	me, _, err := c.Users.Me(ctx)
	if err != nil {
		return fmt.Errorf("check the exchanged credential: %w", err)
	}
	who := me.Email
	if me.Robot != "" {
		who = "robot " + me.Robot
	}
	cred.User = who
	kr, err := opts.Keyring()
	if err != nil {
		return err
	}
	where, err := kr.Set(server, cred)
	if err != nil {
		return fmt.Errorf("store the credential: %w", err)
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	cfg.CurrentServer = server
	if err := cfg.Save(); err != nil {
		return err
	}
	if where == "keyring" {
		where = "the system keyring"
	}
	cs := opts.IO.ColorScheme()
	fmt.Fprintf(opts.IO.ErrOut, "%s Logged in to %s as %s with %s, until %s (credentials stored in %s)\n",
		cs.SuccessIcon(), server, cs.Bold(termtext.Line(who)), from, ex.Expiry.UTC().Format(time.RFC3339), where)
	return nil
}

func bearer(c *keyring.Credential) string {
	if c.APIKey != "" {
		return c.APIKey
	}
	return c.AccessToken
}

// readToken reads an API key from r: the first non-empty line.
func readToken(r io.Reader) (*keyring.Credential, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("read the token from standard input: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return nil, cmdutil.FlagErrorf("--with-token: no token on standard input")
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return nil, cmdutil.FlagErrorf("--with-token: standard input holds more than one token")
	}
	return &keyring.Credential{APIKey: tok}, nil
}

// callbackResult is what the loopback handler learned.
type callbackResult struct {
	tok *oauth2.Token
	err error
}

// authorize runs the authorization code flow and returns the token.
func authorize(ctx context.Context, opts *LoginOptions, server string) (*keyring.Credential, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, &cmdutil.HintError{
			Err:  fmt.Errorf("listen for the browser's redirect: %w", err),
			Hint: "Run chartctl login --device to sign in with a code in a browser on any device instead.",
		}
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr().String())

	as := cmdutil.DiscoverAuthServer(ctx, opts.HTTPClient, server)
	cfg := cmdutil.OAuthConfig(as, redirect, opts.Scopes)
	verifier := oauth2.GenerateVerifier()
	state, err := randomState()
	if err != nil {
		return nil, err
	}
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))

	exchangeCtx := context.WithValue(ctx, oauth2.HTTPClient, opts.HTTPClient)
	results := make(chan callbackResult, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		res := handleCallback(exchangeCtx, cfg, r, state, verifier)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if res.err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = page.Execute(w, pageData{OK: false, Message: res.err.Error()})
		} else {
			_ = page.Execute(w, pageData{OK: true, Server: server})
		}
		select {
		case results <- res:
		default: // a second request after the first: ignore it
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()

	cs := opts.IO.ColorScheme()
	if opts.NoBrowser {
		fmt.Fprintf(opts.IO.ErrOut, "Open this URL in a browser on this machine to sign in to %s:\n\n  %s\n\nWaiting for the browser...\n", server, authURL)
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "Opening your browser to sign in to %s.\nIf it does not open, visit:\n\n  %s\n\nWaiting for the browser...\n", server, authURL)
		if err := opts.Browser.Open(authURL); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%s Could not open a browser (%v); open the URL above yourself in a browser on this machine,\n  or press Ctrl-C and run chartctl login --device to sign in from any device.\n", cs.WarningIcon(), err)
		}
	}

	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-results:
		if res.err != nil {
			return nil, res.err
		}
		return &keyring.Credential{
			AccessToken:  res.tok.AccessToken,
			RefreshToken: res.tok.RefreshToken,
			Expiry:       res.tok.Expiry.UTC(),
			TokenURL:     as.TokenEndpoint,
		}, nil
	case <-timer.C:
		return nil, &cmdutil.HintError{
			Err:  fmt.Errorf("gave up waiting for the browser after %s", timeout),
			Hint: "If the browser cannot reach this machine (SSH, containers), run chartctl login --device.",
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// handleCallback checks the redirect's state, reads its code or error, and
// exchanges the code (with the PKCE verifier) for a token.
func handleCallback(ctx context.Context, cfg *oauth2.Config, r *http.Request, state, verifier string) callbackResult {
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
		return callbackResult{err: errors.New("the sign-in response does not match this login (state mismatch); run chartctl login again")}
	}
	if e := q.Get("error"); e != "" {
		if e == "access_denied" {
			return callbackResult{err: &cmdutil.AuthError{Err: errors.New("access was denied in the browser")}}
		}
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		return callbackResult{err: &cmdutil.AuthError{Err: fmt.Errorf("sign-in failed: %s", termtext.Line(msg))}}
	}
	code := q.Get("code")
	if code == "" {
		return callbackResult{err: errors.New("the sign-in response carries no code")}
	}
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return callbackResult{err: fmt.Errorf("exchange the authorization code: %w", err)}
	}
	return callbackResult{tok: tok}
}

func randomState() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate state: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

type pageData struct {
	OK      bool
	Server  string
	Message string
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chartctl login</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f6f8fa;color:#1f2328;display:flex;align-items:center;justify-content:center;min-height:100vh;margin:0}
main{background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:2.5rem 3rem;max-width:30rem;text-align:center}
.icon{font-size:3rem;line-height:1}
.ok{color:#1a7f37}.fail{color:#cf222e}
p{color:#59636e}
</style>
</head>
<body>
<main>
{{if .OK}}
<div class="icon ok">&#10003;</div>
<h1>You are signed in</h1>
<p>chartctl is now signed in to {{.Server}}.<br>You can close this tab and return to your terminal.</p>
{{else}}
<div class="icon fail">&#10007;</div>
<h1>Sign-in failed</h1>
<p>{{.Message}}</p>
<p>Return to your terminal and run <code>chartctl login</code> again.</p>
{{end}}
</main>
</body>
</html>
`))
