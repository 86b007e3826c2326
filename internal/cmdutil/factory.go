// Package cmdutil holds what every chartctl command shares: the Factory
// that lazily builds the API client from the resolved server and
// credential, typed errors that decide exit codes, and helpers for flags,
// output and completion.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/browser"
	"github.com/chartctl/chartctl/internal/build"
	"github.com/chartctl/chartctl/internal/config"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
)

// DefaultServer is the server used when nothing else names one.
const DefaultServer = "http://127.0.0.1:8080"

// Environment variables read by the command line.
const (
	EnvServer    = "CHARTCTL_SERVER"
	EnvToken     = "CHARTCTL_TOKEN"
	EnvNoKeyring = "CHARTCTL_NO_KEYRING"
)

// Output formats of -o/--output.
const (
	OutputTable = "table"
	OutputJSON  = "json"
)

// GlobalFlags are the values of the root command's persistent flags.
type GlobalFlags struct {
	// Server is --server.
	Server string
	// Token is --token.
	Token string
	// Output is -o/--output: "table", "json" or "" (decided by the terminal).
	Output string
	// MaxRetries is --max-retries.
	MaxRetries int
}

// Factory builds what commands need, lazily: a command that never talks to
// the server never reads the keyring.
type Factory struct {
	// IOStreams are the command's streams.
	IOStreams *iostreams.IOStreams
	// Getenv reads the environment.
	Getenv func(string) string
	// Browser opens the sign-in page of `login`.
	Browser browser.Opener
	// HTTPClient sends the API and OAuth requests; nil means a default.
	HTTPClient *http.Client
	// Flags holds the global flags, filled in when the command line is parsed.
	Flags GlobalFlags

	// ConfigDir returns the per-user config directory.
	ConfigDir func() (string, error)
	// KeyringBackend is the OS keyring; nil stores credentials in the file
	// only.
	KeyringBackend keyring.Backend

	mu      sync.Mutex
	cfg     *config.Config
	keyring *keyring.Store
	client  *client.Client
}

// New returns a Factory for the process: real streams, environment,
// keyring and browser. CHARTCTL_NO_KEYRING=1 keeps credentials in the
// 0600 file instead of the OS keyring.
func New(ios *iostreams.IOStreams, getenv func(string) string) *Factory {
	f := &Factory{
		IOStreams: ios,
		Getenv:    getenv,
		Browser:   browser.System{Getenv: getenv, Stderr: ios.ErrOut},
	}
	f.ConfigDir = func() (string, error) { return config.Dir(getenv) }
	if getenv(EnvNoKeyring) == "" {
		f.KeyringBackend = keyring.OS{}
	}
	return f
}

// Config returns the user's settings, read once.
func (f *Factory) Config() (*config.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg != nil {
		return f.cfg, nil
	}
	dir, err := f.ConfigDir()
	if err != nil {
		return nil, err
	}
	c, err := config.Load(dir)
	if err != nil {
		return nil, err
	}
	f.cfg = c
	return c, nil
}

// Keyring returns the credential store.
func (f *Factory) Keyring() (*keyring.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keyring != nil {
		return f.keyring, nil
	}
	dir, err := f.ConfigDir()
	if err != nil {
		return nil, err
	}
	f.keyring = keyring.New(f.KeyringBackend, dir, f.IOStreams.ErrOut)
	return f.keyring, nil
}

// Server returns the server to talk to: --server, else $CHARTCTL_SERVER,
// else the server of the last login, else DefaultServer. The result has
// no trailing slash, so it is a stable key for stored credentials.
func (f *Factory) Server() (string, error) {
	s := f.Flags.Server
	if s == "" {
		s = f.Getenv(EnvServer)
	}
	if s == "" {
		c, err := f.Config()
		if err != nil {
			return "", err
		}
		s = c.CurrentServer
	}
	if s == "" {
		s = DefaultServer
	}
	return NormalizeServer(s)
}

// NormalizeServer checks that s is an http(s) URL and trims its trailing
// slash; a bare host gets https://.
func NormalizeServer(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return "", &FlagError{Err: fmt.Errorf("invalid server %q: want an http:// or https:// URL", s)}
	}
	s = strings.TrimRight(s, "/")
	if u, err := url.Parse(s); err == nil && serverPath(u.Path) {
		// The Helm repository URL (…/helm/stable) or the API's, pasted
		// where the server's address belongs, would only ever get 404s.
		base := *u
		base.Path, base.RawPath, base.RawQuery, base.Fragment = "", "", "", ""
		return "", &FlagError{Err: fmt.Errorf("invalid server %q: %s is a path on the server; use the server's address: %s", s, u.Path, base.String())}
	}
	return s, nil
}

// serverPath reports whether p is one of the paths a chartctl server
// serves (its API, registry, Helm repositories, OAuth server, dashboard
// pages) rather than a prefix a proxy may put the whole server under.
func serverPath(p string) bool {
	for _, prefix := range []string{"/v1", "/v2", "/helm", "/oauth", "/repositories"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// Token returns the credential to send and where it came from: --token,
// else $CHARTCTL_TOKEN (which wins over stored credentials, for CI), else
// the keyring. A stored OAuth token comes as a TokenSource that refreshes
// it when it expires and stores the rotated token. Without any credential
// both results are nil.
// White space around a given token is dropped: a CI secret often ends with
// a newline, which no header value may hold.
func (f *Factory) Token(ctx context.Context, server string) (oauth2.TokenSource, string, error) {
	if t := strings.TrimSpace(f.Flags.Token); t != "" {
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: t, TokenType: "Bearer"}), "--token", nil
	}
	if t := strings.TrimSpace(f.Getenv(EnvToken)); t != "" {
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: t, TokenType: "Bearer"}), EnvToken, nil
	}
	kr, err := f.Keyring()
	if err != nil {
		return nil, "", err
	}
	cred, err := kr.Get(server)
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if cred.APIKey != "" {
		if !cred.Expiry.IsZero() && !time.Now().Before(cred.Expiry) {
			// A robot's credential from `login --oidc-token-file` that ran
			// out: as good as none, so a command in CI can exchange anew.
			return nil, "", nil
		}
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: cred.APIKey, TokenType: "Bearer"}), "keyring", nil
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, f.httpClient())
	return NewStoredTokenSource(ctx, server, cred, kr), "keyring", nil
}

func (f *Factory) httpClient() *http.Client {
	if f.HTTPClient != nil {
		return f.HTTPClient
	}
	return http.DefaultClient
}

// Client returns the API client for the resolved server and credential,
// built once. Retries are reported on standard error.
func (f *Factory) Client() (*client.Client, error) {
	f.mu.Lock()
	c := f.client
	f.mu.Unlock()
	if c != nil {
		return c, nil
	}
	server, err := f.Server()
	if err != nil {
		return nil, err
	}
	ts, _, err := f.Token(context.Background(), server)
	if err != nil {
		return nil, err
	}
	return f.newClient(server, ts)
}

// newClient builds the API client for server with credential ts (nil:
// none) and keeps it as the Factory's client.
func (f *Factory) newClient(server string, ts oauth2.TokenSource) (*client.Client, error) {
	opts := []client.Option{
		client.WithHTTPClient(f.httpClient()),
		client.WithUserAgent("chartctl/" + build.Version),
		client.WithRetryHook(func(ev client.RetryEvent) {
			fmt.Fprintf(f.IOStreams.ErrOut, "retrying in %s (attempt %d): %s\n", ev.Wait.Round(100*time.Millisecond), ev.Attempt, retryReason(ev.Err))
		}),
	}
	if f.Flags.MaxRetries >= 0 {
		opts = append(opts, client.WithMaxRetries(f.Flags.MaxRetries))
	}
	if ts != nil {
		opts = append(opts, client.WithTokenSource(ts))
	}
	c, err := client.New(server, opts...)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	f.mu.Lock()
	f.client = c
	f.mu.Unlock()
	return c, nil
}

func retryReason(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("%d %s", ce.StatusCode, ce.Code)
	}
	// A network error's text repeats the URL twice; its last part says
	// what happened ("connection refused", "EOF").
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		msg := op.Err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return msg
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// WantsJSON reports whether output should be JSON: -o json, or no -o and
// standard output is not a terminal.
func (f *Factory) WantsJSON() bool {
	switch f.Flags.Output {
	case OutputJSON:
		return true
	case OutputTable:
		return false
	}
	return !f.IOStreams.IsStdoutTTY()
}
