package cli

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/browser"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// run runs the command line with f and returns the exit code, stdout and
// stderr.
func run(t *testing.T, f *cmdutil.Factory, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f.IOStreams = ios
	code := Run(context.Background(), f, Hooks{}, args)
	return code, out.String(), errOut.String()
}

func newFactory(t *testing.T, dir string, env map[string]string) *cmdutil.Factory {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.New(ios, func(k string) string { return env[k] })
	f.ConfigDir = func() (string, error) { return dir, nil }
	f.KeyringBackend = nil
	return f
}

// TestLoginEndToEnd runs `chartctl login` against the real authorization
// server with a stub browser that signs in and approves over HTTP, then
// uses the stored credential, and refreshes it once it has expired.
func TestLoginEndToEnd(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "ada@example.com", "correct horse battery", false)
	dir := t.TempDir()

	var donePage string
	opener := browser.OpenerFunc(func(authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(authURL, env.URL+"/oauth/authorize?") {
			t.Errorf("authorize URL %s is not the server's", authURL)
		}
		q := u.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("client_id") != "chartctl" {
			t.Errorf("authorize URL lacks PKCE or state: %s", authURL)
		}
		b := env.NewBrowser(t)
		b.SignIn(t, "ada@example.com", "correct horse battery")
		loc := b.Authorize(t, q, "approve")
		// The browser follows the redirect to chartctl's loopback listener.
		resp, err := http.Get(loc.String())
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		donePage = string(body)
		return nil
	})

	f := newFactory(t, dir, nil)
	f.Browser = opener
	code, _, stderr := run(t, f, "login", "--server", env.URL, "--scopes", "repo:read,repo:write")
	if code != ExitOK {
		t.Fatalf("login exited %d: %s", code, stderr)
	}
	if !strings.Contains(donePage, "You are signed in") {
		t.Errorf("browser saw %q", donePage)
	}
	if !strings.Contains(stderr, "Logged in to "+env.URL+" as ada@example.com") {
		t.Errorf("stderr %q", stderr)
	}
	credFile := filepath.Join(dir, keyring.FileName)
	fi, err := os.Stat(credFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %#o, want 0600", fi.Mode().Perm())
	}
	kr := keyring.New(nil, dir, io.Discard)
	cred, err := kr.Get(env.URL)
	if err != nil || cred.AccessToken == "" || cred.RefreshToken == "" || cred.APIKey != "" {
		t.Fatalf("stored credential %+v, %v", cred, err)
	}

	// The stored credential works, for the server remembered by login.
	f = newFactory(t, dir, nil)
	code, stdout, stderr := run(t, f, "repo", "create", "ada-charts", "-o", "json")
	if code != ExitOK || !strings.Contains(stdout, `"name": "ada-charts"`) {
		t.Fatalf("repo create with the stored token: %d %s %s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, newFactory(t, dir, nil), "auth", "status", "-o", "table")
	if code != ExitOK || !strings.Contains(stdout, "Credential: OAuth token from ") || !strings.Contains(stdout, "credentials.json") {
		t.Errorf("auth status: %d %s", code, stdout)
	}

	// An expired access token is refreshed and the rotated pair stored.
	cred.Expiry = time.Now().Add(-time.Minute)
	if _, err := kr.Set(env.URL, cred); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, newFactory(t, dir, nil), "repo", "list", "-o", "json")
	if code != ExitOK || !strings.Contains(stdout, "ada-charts") {
		t.Fatalf("repo list after expiry: %d %s %s", code, stdout, stderr)
	}
	refreshed, err := kr.Get(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	if refreshed.AccessToken == cred.AccessToken || refreshed.RefreshToken == cred.RefreshToken || !refreshed.Expiry.After(time.Now()) {
		t.Errorf("the refreshed token was not stored: %+v", refreshed)
	}

	// logout revokes the session and forgets it.
	code, _, stderr = run(t, newFactory(t, dir, nil), "logout")
	if code != ExitOK {
		t.Fatalf("logout: %d %s", code, stderr)
	}
	if _, err := kr.Get(env.URL); err == nil {
		t.Error("credential still stored after logout")
	}
	code, _, stderr = run(t, newFactory(t, dir, map[string]string{cmdutil.EnvServer: env.URL}), "repo", "list")
	if code != ExitError || !strings.Contains(stderr, "chartctl login") {
		t.Errorf("after logout: %d %s", code, stderr)
	}
}

// TestLoginDenied checks that denying consent stores nothing.
func TestLoginDenied(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "ada@example.com", "pw-pw-pw-pw", false)
	dir := t.TempDir()
	f := newFactory(t, dir, nil)
	f.Browser = browser.OpenerFunc(func(authURL string) error {
		u, _ := url.Parse(authURL)
		b := env.NewBrowser(t)
		b.SignIn(t, "ada@example.com", "pw-pw-pw-pw")
		loc := b.Authorize(t, u.Query(), "deny")
		resp, err := http.Get(loc.String())
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
	code, _, stderr := run(t, f, "login", "--server", env.URL)
	if code != ExitError || !strings.Contains(stderr, "denied") {
		t.Fatalf("login: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, keyring.FileName)); !os.IsNotExist(err) {
		t.Errorf("credentials written after a denial: %v", err)
	}
}

// loginAs runs `chartctl login` (with extra arguments) against env,
// signing in as email in a stub browser that approves the consent page,
// and returns the config directory holding the credential and the consent
// page the browser was shown.
func loginAs(t *testing.T, env *oauthtest.Env, email, password string, extra ...string) (dir, consent string) {
	t.Helper()
	dir = t.TempDir()
	opener := browser.OpenerFunc(func(authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		b := env.NewBrowser(t)
		b.SignIn(t, email, password)
		consent = b.Get(t, "/oauth/authorize?"+u.RawQuery).Body
		loc := b.Authorize(t, u.Query(), "approve")
		resp, err := http.Get(loc.String())
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
	f := newFactory(t, dir, nil)
	f.Browser = opener
	code, _, stderr := run(t, f, append([]string{"login", "--server", env.URL}, extra...)...)
	if code != ExitOK {
		t.Fatalf("login exited %d: %s", code, stderr)
	}
	return dir, consent
}

// TestLoginThenAPIKeyCreate: `chartctl login` asks for keys:write, so
// `chartctl api-key create` works right after it (today's main refused
// every OAuth token), and the consent page says the keys outlive the app.
func TestLoginThenAPIKeyCreate(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "ada@example.com", "correct horse battery", false)
	dir, consent := loginAs(t, env, "ada@example.com", "correct horse battery")
	if !strings.Contains(consent, "keep working after you revoke the application") {
		t.Errorf("consent page does not say keys outlive the app:\n%s", consent)
	}
	if strings.Contains(consent, "admin-warning") {
		t.Error("consent page for a non-admin mentions admin access")
	}
	code, stdout, stderr := run(t, newFactory(t, dir, nil), "api-key", "create", "--name", "ci", "--scopes", "repo:read", "-o", "json")
	if code != ExitOK || !strings.Contains(stdout, `"key": "chartctl_`) {
		t.Fatalf("api-key create after login: %d %s %s", code, stdout, stderr)
	}
	// The new key's scopes never exceed the login's: admin is refused.
	code, _, stderr = run(t, newFactory(t, dir, nil), "api-key", "create", "--name", "wide", "--scopes", "repo:read,admin", "-o", "json")
	if code == ExitOK || !strings.Contains(stderr, "scopes your credential lacks") {
		t.Errorf("api-key create with admin after a default login: %d %s", code, stderr)
	}
}
