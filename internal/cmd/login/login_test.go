package login

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/browser"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/config"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
)

// stubAuthServer is a minimal OAuth authorization server with PKCE S256
// and /v1/user, enough to check the client side of the flow over real
// HTTP. It approves every authorization request at once.
type stubAuthServer struct {
	*httptest.Server
	mu        sync.Mutex
	challenge string
	redirect  string
	deny      bool
	tokenReqs []url.Values
}

func newStubAuthServer(t *testing.T) *stubAuthServer {
	t.Helper()
	s := &stubAuthServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != "chartctl" || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
			http.Error(w, "bad authorize request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		if !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
			http.Error(w, "redirect not loopback", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.challenge, s.redirect = q.Get("code_challenge"), q.Get("redirect_uri")
		deny := s.deny
		s.mu.Unlock()
		v := url.Values{"state": {q.Get("state")}}
		if deny {
			v.Set("error", "access_denied")
		} else {
			v.Set("code", "the-code")
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+v.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		s.tokenReqs = append(s.tokenReqs, r.PostForm)
		challenge, redirect := s.challenge, s.redirect
		s.mu.Unlock()
		f := r.PostForm
		w.Header().Set("Content-Type", "application/json")
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if f.Get("grant_type") != "authorization_code" || f.Get("code") != "the-code" || f.Get("client_id") != "chartctl" ||
			f.Get("redirect_uri") != redirect || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-1", "scope": "repo:read"})
	})
	mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		auth := r.Header.Get("Authorization")
		if auth != "Bearer at-1" && auth != "Bearer chartctl_good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"invalid credential"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"id":"usr_1","email":"ada@example.com","admin":false,"scopes":["repo:read"],"created_at":"2026-01-01T00:00:00Z"}}`))
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// followingBrowser is a stub browser: it GETs the URL and follows the
// redirects, as a browser whose user approves at once would.
func followingBrowser(t *testing.T, pages *[]string) browser.Opener {
	return browser.OpenerFunc(func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			t.Errorf("browser: %v", err)
			return err
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		*pages = append(*pages, b.String())
		return nil
	})
}

func setup(t *testing.T, srv string, opener browser.Opener) (*LoginOptions, *keyring.Store, string) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	dir := t.TempDir()
	kr := keyring.New(nil, dir, ios.ErrOut)
	cfg, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &LoginOptions{
		IO:         ios,
		Config:     func() (*config.Config, error) { return cfg, nil },
		Keyring:    func() (*keyring.Store, error) { return kr, nil },
		Server:     func() (string, error) { return srv, nil },
		Browser:    opener,
		HTTPClient: http.DefaultClient,
		Timeout:    30 * time.Second,
		Scopes:     []string{"repo:read"},
	}, kr, dir
}

func TestLoginBrowserFlow(t *testing.T) {
	as := newStubAuthServer(t)
	var pages []string
	opts, kr, dir := setup(t, as.URL, followingBrowser(t, &pages))
	if err := loginRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	cred, err := kr.Get(as.URL)
	if err != nil {
		t.Fatal(err)
	}
	if cred.AccessToken != "at-1" || cred.RefreshToken != "rt-1" || cred.User != "ada@example.com" || cred.Expiry.IsZero() {
		t.Errorf("stored %+v", cred)
	}
	if cred.TokenURL != as.URL+"/oauth/token" {
		t.Errorf("token URL %q", cred.TokenURL)
	}
	fi, err := os.Stat(filepath.Join(dir, keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v", fi.Mode().Perm())
	}
	c, _ := config.Load(dir)
	if c.CurrentServer != as.URL {
		t.Errorf("current server %q", c.CurrentServer)
	}
	if len(pages) != 1 || !strings.Contains(pages[0], "You are signed in") {
		t.Errorf("browser saw %q", pages)
	}
	stderr := opts.IO.ErrOut.(interface{ String() string }).String()
	if !strings.Contains(stderr, as.URL+"/oauth/authorize?") || !strings.Contains(stderr, "Logged in to") {
		t.Errorf("stderr %q lacks the URL or the result", stderr)
	}
}

func TestLoginDenied(t *testing.T) {
	as := newStubAuthServer(t)
	as.deny = true
	var pages []string
	opts, kr, _ := setup(t, as.URL, followingBrowser(t, &pages))
	err := loginRun(t.Context(), opts)
	var ae *cmdutil.AuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("err = %v, want an AuthError saying access was denied", err)
	}
	if _, err := kr.Get(as.URL); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("a credential was stored after a denial: %v", err)
	}
	if len(pages) != 1 || !strings.Contains(pages[0], "Sign-in failed") {
		t.Errorf("browser saw %q", pages)
	}
}

func TestLoginStateMismatch(t *testing.T) {
	as := newStubAuthServer(t)
	// A browser that lands on the callback with a forged state.
	forger := browser.OpenerFunc(func(u string) error {
		pu, _ := url.Parse(u)
		redirect := pu.Query().Get("redirect_uri")
		resp, err := http.Get(redirect + "?code=the-code&state=forged")
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	opts, _, _ := setup(t, as.URL, forger)
	err := loginRun(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "state mismatch") {
		t.Fatalf("err = %v, want a state mismatch", err)
	}
	if len(as.tokenReqs) != 0 {
		t.Errorf("the code was exchanged despite the forged state")
	}
}

func TestLoginNoBrowserOnlyPrints(t *testing.T) {
	as := newStubAuthServer(t)
	opened := false
	opts, _, _ := setup(t, as.URL, browser.OpenerFunc(func(string) error { opened = true; return nil }))
	opts.NoBrowser = true
	opts.Timeout = 50 * time.Millisecond
	err := loginRun(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "gave up waiting") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if opened {
		t.Error("--no-browser opened a browser")
	}
	stderr := opts.IO.ErrOut.(interface{ String() string }).String()
	if !strings.Contains(stderr, "code_challenge_method=S256") {
		t.Errorf("URL not printed: %q", stderr)
	}
}

func TestLoginWithToken(t *testing.T) {
	as := newStubAuthServer(t)
	opts, kr, _ := setup(t, as.URL, nil)
	opts.WithToken = true
	opts.IO.In = strings.NewReader("chartctl_good\n")
	if err := loginRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	cred, err := kr.Get(as.URL)
	if err != nil || cred.APIKey != "chartctl_good" || cred.User != "ada@example.com" {
		t.Fatalf("stored %+v, %v", cred, err)
	}

	opts.IO.In = strings.NewReader("chartctl_bad\n")
	err = loginRun(t.Context(), opts)
	var ae *cmdutil.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("bad token: err = %v, want an AuthError", err)
	}
}

func TestReadToken(t *testing.T) {
	if _, err := readToken(strings.NewReader("  \n")); err == nil {
		t.Error("empty input accepted")
	}
	if _, err := readToken(strings.NewReader("a b")); err == nil {
		t.Error("two tokens accepted")
	}
	c, err := readToken(strings.NewReader("chartctl_x\r\n"))
	if err != nil || c.APIKey != "chartctl_x" {
		t.Errorf("readToken = %+v, %v", c, err)
	}
}

func TestNewCmdLoginFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	run := func(args ...string) (*LoginOptions, error) {
		var got *LoginOptions
		cmd := NewCmdLogin(f, func(o *LoginOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(ios.Out)
		cmd.SetErr(ios.ErrOut)
		return got, cmd.Execute()
	}
	o, err := run()
	// The six original scopes and keys:write, not admin (CONTRACT §13).
	if err != nil || strings.Join(o.Scopes, ",") != "repo:read,repo:write,team:read,team:write,org:read,org:write,keys:write" {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	if o, err := run("--scopes", "repo:read,admin"); err != nil || len(o.Scopes) != 2 {
		t.Errorf("--scopes with admin: %+v, %v", o, err)
	}
	o, err = run("--scopes", "repo:read,team:read", "--no-browser")
	if err != nil || len(o.Scopes) != 2 || !o.NoBrowser {
		t.Errorf("flags: %+v, %v", o, err)
	}
	var fe *cmdutil.FlagError
	if _, err := run("--scopes", "everything"); !errors.As(err, &fe) {
		t.Errorf("bad scope: %v", err)
	}
	if _, err := run("--with-token", "--no-browser"); !errors.As(err, &fe) {
		t.Errorf("conflicting flags: %v", err)
	}
}
