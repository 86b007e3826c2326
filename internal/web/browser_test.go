package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// chromium returns the browser binary, skipping the test when there is none
// (unless CHARTCTL_REQUIRE_E2E=1, as in CI, where that is a failure).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHARTCTL_CHROMIUM"); p != "" {
		return p
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
		t.Fatal("chromium not found (set CHARTCTL_CHROMIUM) and CHARTCTL_REQUIRE_E2E=1")
	}
	t.Skip("chromium not found; set CHARTCTL_CHROMIUM to run the browser tests")
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile; extra
// options are added to the usual ones.
func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	opts = append(opts, extra...)
	// A bound on the whole browser session, so a broken page fails the
	// test instead of hanging it; not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// screenshot saves a full-page PNG to $CHARTCTL_SCREENSHOTS (default: a
// temp dir) for people to look at.
func screenshot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	dir := os.Getenv("CHARTCTL_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tgt)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}

const (
	email    = "maria@example.com"
	password = "a long enough password"
)

// run runs the steps in the browser, failing the test at the first error.
func run(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// get runs one action that reads something from the page.
func get[T any](t *testing.T, ctx context.Context, step string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return v
}

func signIn(t *testing.T, ctx context.Context, shot string) {
	t.Helper()
	run(t, ctx, "sign in",
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		screenshot(t, shot),
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
	)
}

func TestBrowserAPIKeyLifecycle(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, email, password, false)
	env.MustRepo(t, "platform-charts", "public")
	ctx := newBrowser(t)

	run(t, ctx, "open dashboard", chromedp.Navigate(env.URL+"/signin?return_to=%2Frepositories"))
	signIn(t, ctx, "signin")
	run(t, ctx, "repository list", chromedp.WaitVisible(chromedp.CSS(`a[href="/repositories/platform-charts"]`)), screenshot(t, "repositories"))
	if h := get(t, ctx, "heading", chromedp.Text(chromedp.CSS(`h1`))); h != "Repositories" {
		t.Fatalf("after sign-in the page is %q", h)
	}

	run(t, ctx, "generate key",
		chromedp.Navigate(env.URL+"/settings/api-keys"),
		chromedp.Click(chromedp.CSS(`#generate-key`)),
		chromedp.WaitVisible(chromedp.CSS(`#key-name`)),
		chromedp.SendKeys(chromedp.CSS(`#key-name`), "CI deploys"),
		chromedp.Click(chromedp.CSS(`input[value="repo:write"]`)),
		chromedp.SetValue(chromedp.CSS(`#key-expiry`), "30"),
		screenshot(t, "apikey-new"),
		chromedp.Click(chromedp.CSS(`#create-key`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key`)),
	)
	key := get(t, ctx, "read key", chromedp.Value(chromedp.CSS(`#new-key`)))
	warning := get(t, ctx, "read warning", chromedp.Text(chromedp.CSS(`.alert-warning`)))
	run(t, ctx, "copy key",
		chromedp.Click(chromedp.CSS(`#copy-key`)),
		chromedp.WaitVisible(chromedp.CSS(`#copy-status:not(:empty)`)),
		screenshot(t, "apikey-created"),
	)
	if !strings.HasPrefix(key, "chartctl_") || !strings.Contains(warning, "will not be shown again") {
		t.Fatalf("key %q, warning %q", key, warning)
	}
	r := env.Do(t, http.MethodGet, "/v1/repositories", key, nil)
	if r.StatusCode != 200 || !strings.Contains(string(r.Body), "platform-charts") {
		t.Fatalf("API with the new key: %d %s", r.StatusCode, r.Body)
	}
	var user struct{ Data struct{ Scopes []string } }
	env.Do(t, http.MethodGet, "/v1/user", key, nil).JSON(t, &user)
	if strings.Join(user.Data.Scopes, ",") != "repo:read,repo:write" {
		t.Errorf("key scopes %v, want repo:read and repo:write", user.Data.Scopes)
	}

	run(t, ctx, "list keys",
		chromedp.Navigate(env.URL+"/settings/api-keys"),
		chromedp.WaitVisible(chromedp.CSS(`#keys-table`)),
		screenshot(t, "apikeys"),
	)
	rows := get(t, ctx, "read key list", chromedp.Text(chromedp.CSS(`#keys-table tbody`)))
	if !strings.Contains(rows, "CI deploys") || !strings.Contains(rows, "repo:write") || strings.Contains(rows, key) {
		t.Errorf("key list %q", rows)
	}

	run(t, ctx, "revoke key",
		chromedp.Click(chromedp.CSS(`#keys-table a[href$="/revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-revoke`)),
		screenshot(t, "apikey-revoke"),
		chromedp.Click(chromedp.CSS(`#confirm-revoke`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert-success`)),
	)
	if flash := get(t, ctx, "read notice", chromedp.Text(chromedp.CSS(`.alert-success`))); !strings.Contains(flash, "revoked") {
		t.Errorf("notice %q", flash)
	}
	if r := env.Do(t, http.MethodGet, "/v1/repositories", key, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d, want 401", r.StatusCode)
	}

	run(t, ctx, "sign out",
		chromedp.Click(chromedp.CSS(`.account button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
	)
}

func TestBrowserAuthorizationCodeFlow(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, email, password, false)
	env.MustRepo(t, "platform-charts", "public")

	// The third-party application: it receives the redirect.
	got := make(chan url.Values, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/callback" {
			select {
			case got <- r.URL.Query():
			default:
			}
		}
		_, _ = w.Write([]byte("<!doctype html><title>Deploy Bot</title><h1>Signed in</h1>"))
	}))
	t.Cleanup(app.Close)
	redirect := app.URL + "/callback"
	cl := env.MustClient(t, "Deploy Bot", false, redirect)

	verifier, challenge := oauthtest.PKCE()
	authorize := env.URL + "/oauth/authorize?" + url.Values{
		"client_id": {cl.ClientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {"repo:read team:read"}, "state": {"s-123"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}.Encode()

	ctx := newBrowser(t)
	run(t, ctx, "authorize", chromedp.Navigate(authorize))
	signIn(t, ctx, "signin-oauth")
	run(t, ctx, "consent", chromedp.WaitVisible(chromedp.CSS(`#approve`)), screenshot(t, "consent"))
	consent := get(t, ctx, "read consent", chromedp.Text(chromedp.CSS(`.auth-card`)))
	run(t, ctx, "approve", chromedp.Click(chromedp.CSS(`#approve`)))
	if !strings.Contains(consent, "Deploy Bot") || !strings.Contains(consent, "Read repositories and download charts") || !strings.Contains(consent, "Read teams and their members") {
		t.Errorf("consent page text %q", consent)
	}
	var q url.Values
	select {
	case q = <-got:
	case <-ctx.Done():
		t.Fatal("the application never received the redirect")
	}
	if q.Get("state") != "s-123" || q.Get("code") == "" {
		t.Fatalf("redirect query %v", q)
	}

	form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
	req, err := http.NewRequest(http.MethodPost, env.URL+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(cl.ClientID, cl.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	if err := decodeJSON(resp, &tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token exchange: %d %v", resp.StatusCode, err)
	}
	r := env.Do(t, http.MethodGet, "/v1/repositories", tok.AccessToken, nil)
	if r.StatusCode != 200 || !strings.Contains(string(r.Body), "platform-charts") || tok.Scope != "repo:read team:read" {
		t.Fatalf("API with the access token: %d %s (scope %q)", r.StatusCode, r.Body, tok.Scope)
	}
}
