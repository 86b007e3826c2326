package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/browser"
	"github.com/chartctl/chartctl/internal/cli"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/identity/oidc"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit/dextest"
	"github.com/chartctl/chartctl/internal/web"
)

// startDexServer starts chartctl with sign-in through a real Dex.
func startDexServer(t *testing.T) (*oauthtest.Env, *dextest.Dex) {
	t.Helper()
	chromium(t)
	late := &lateSSO{}
	env := oauthtest.Start(t, oauthtest.Config{SSO: web.SSOOptions{Provider: late, Name: "Dex", Key: web.SSOKey("dex")}})
	dex := dextest.Start(t, dextest.Options{RedirectURI: env.URL + "/signin/oidc/callback"})
	p, err := oidc.New(t.Context(), oidc.Config{Issuer: dex.Issuer, ClientID: dex.ClientID, ClientSecret: dex.ClientSecret,
		RedirectURL: env.URL + "/signin/oidc/callback", Scopes: []string{"groups"}, HTTPClient: dex.Client()})
	if err != nil {
		t.Fatal(err)
	}
	late.p = p
	env.MustRepo(t, "platform-charts", "internal")
	return env, dex
}

// cliFactory is the command line's factory with its config and
// credentials in dir and standard error in errOut.
func cliFactory(dir string, errOut interface{ Write([]byte) (int, error) }) (*cmdutil.Factory, *bytes.Buffer) {
	ios, _, out, _ := iostreams.Test()
	ios.ErrOut = errOut
	f := cmdutil.New(ios, func(string) string { return "" })
	f.ConfigDir = func() (string, error) { return dir, nil }
	f.KeyringBackend = nil
	return f, out
}

// throughDex follows the browser, already at chartctl's sign-in page,
// through "Sign in with Dex" and Dex's login form, to the consent page
// that comes back, and approves it.
func throughDex(t *testing.T, ctx context.Context, user dextest.User, shot string) {
	t.Helper()
	run(t, ctx, "chartctl sign-in page",
		chromedp.WaitVisible(chromedp.CSS(`#signin-sso`)),
		chromedp.Click(chromedp.CSS(`#signin-sso`)),
	)
	run(t, ctx, "Dex's login form",
		chromedp.WaitVisible(chromedp.CSS(`#login`)),
		chromedp.SendKeys(chromedp.CSS(`#login`), user.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), user.Password),
		chromedp.Click(chromedp.CSS(`#submit-login`)),
	)
	// A bound on the wait, so a failure can still say where the browser
	// ended up; not a timing assertion.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`#approve`)))
	cancel()
	if err != nil {
		loc := get(t, ctx, "location", chromedp.Location())
		body := get(t, ctx, "page text", chromedp.Text(chromedp.CSS(`body`)))
		t.Fatalf("no consent page after Dex (%v): at %s:\n%s", err, loc, body)
	}
	run(t, ctx, "consent", screenshot(t, shot+"-consent"), chromedp.Click(chromedp.CSS(`#approve`)))
}

// wantWorkingCLI checks that the credential login stored in dir works
// and is the Dex user's.
func wantWorkingCLI(t *testing.T, env *oauthtest.Env, dir, email string) {
	t.Helper()
	var errOut bytes.Buffer
	f, out := cliFactory(dir, &errOut)
	if code := cli.Run(context.Background(), f, cli.Hooks{}, []string{"auth", "status", "-o", "json"}); code != cli.ExitOK || !strings.Contains(out.String(), `"user": "`+email+`"`) {
		t.Fatalf("auth status after login: %d %s %s", code, out, errOut.String())
	}
	f, out = cliFactory(dir, &errOut)
	if code := cli.Run(context.Background(), f, cli.Hooks{}, []string{"repo", "list", "-o", "json"}); code != cli.ExitOK || !strings.Contains(out.String(), "platform-charts") {
		t.Fatalf("repo list after login: %d %s %s", code, out, errOut.String())
	}
}

// TestBrowserCLILoginThroughDex: `chartctl login` opens its authorize URL
// in a real browser (the opener injected), which goes through chartctl's
// sign-in page, Dex's login form and the consent page back to the CLI's
// loopback port; the CLI then works as the Dex user.
func TestBrowserCLILoginThroughDex(t *testing.T) {
	env, dex := startDexServer(t)
	ana := dex.User(t, "ana")
	ctx := newDexBrowser(t)
	dir := t.TempDir()
	var errOut bytes.Buffer
	f, _ := cliFactory(dir, &errOut)
	f.Browser = browser.OpenerFunc(func(authURL string) error {
		run(t, ctx, "authorize URL", chromedp.Navigate(authURL))
		throughDex(t, ctx, ana, "cli-login")
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`h1`)))
	})
	if code := cli.Run(context.Background(), f, cli.Hooks{}, []string{"login", "--server", env.URL}); code != cli.ExitOK {
		t.Fatalf("login exited %d: %s", code, errOut.String())
	}
	if h := get(t, ctx, "loopback page", chromedp.Text(chromedp.CSS(`h1`))); h != "You are signed in" {
		t.Errorf("the browser ended on %q", h)
	}
	if !strings.Contains(errOut.String(), "Logged in to "+env.URL+" as "+ana.Email) {
		t.Errorf("login said %q", errOut.String())
	}
	wantWorkingCLI(t, env, dir, ana.Email)
}

// lockedBuffer is standard error of a login running while the test reads
// what it printed.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var printedCode = regexp.MustCompile(`(?s)open this address in a browser on any device:\s+(\S+)\s+and enter the code ([A-Z]{4}-[A-Z]{4})`)

// TestBrowserCLIDeviceLoginThroughDex: `chartctl login --device` prints
// an address and a code; the test reads them, and a real browser opens
// the address, signs in through Dex, types the code and approves; the
// polling CLI then holds a working credential.
func TestBrowserCLIDeviceLoginThroughDex(t *testing.T) {
	env, dex := startDexServer(t)
	env.Clock.FollowRealTime(t)
	ana := dex.User(t, "ana")
	ctx := newDexBrowser(t)
	dir := t.TempDir()
	errOut := &lockedBuffer{}
	f, _ := cliFactory(dir, errOut)
	// A failing test stops the polling login before the server stops.
	lctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	done := make(chan int, 1)
	go func() { done <- cli.Run(lctx, f, cli.Hooks{}, []string{"login", "--device", "--server", env.URL}) }()

	var m []string
	for m == nil {
		select {
		case code := <-done:
			t.Fatalf("login --device ended (%d) before printing a code: %s", code, errOut.String())
		case <-time.After(100 * time.Millisecond):
			m = printedCode.FindStringSubmatch(errOut.String())
		}
	}
	verify, userCode := m[1], m[2]
	if verify != env.URL+"/device" {
		t.Fatalf("verification address %q", verify)
	}
	// The person types the code on the page reached after signing in.
	run(t, ctx, "device page", chromedp.Navigate(verify))
	run(t, ctx, "sign-in first", chromedp.WaitVisible(chromedp.CSS(`#signin-sso`)))
	if loc := get(t, ctx, "location", chromedp.Location()); !strings.Contains(loc, "return_to="+url.QueryEscape("/device")) {
		t.Fatalf("the device page sent an anonymous visitor to %s", loc)
	}
	run(t, ctx, "Dex", chromedp.Click(chromedp.CSS(`#signin-sso`)),
		chromedp.WaitVisible(chromedp.CSS(`#login`)),
		chromedp.SendKeys(chromedp.CSS(`#login`), ana.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), ana.Password),
		chromedp.Click(chromedp.CSS(`#submit-login`)),
	)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`#device-form`)))
	cancel()
	if err != nil {
		t.Fatalf("no code form after Dex (%v): at %s", err, get(t, ctx, "location", chromedp.Location()))
	}
	run(t, ctx, "enter the code", screenshot(t, "device-form"),
		chromedp.SendKeys(chromedp.CSS(`#user_code`), strings.ToLower(userCode)),
		chromedp.Click(chromedp.CSS(`#device-continue`)),
		chromedp.WaitVisible(chromedp.CSS(`#approve`)),
		chromedp.WaitVisible(chromedp.CSS(`#device-code`)),
	)
	if shown := get(t, ctx, "code on the consent page", chromedp.Text(chromedp.CSS(`#device-code`))); shown != userCode {
		t.Fatalf("the consent page shows %q, the device %q", shown, userCode)
	}
	run(t, ctx, "approve", screenshot(t, "device-consent"),
		chromedp.Click(chromedp.CSS(`#approve`)),
		chromedp.WaitVisible(chromedp.CSS(`#device-done`)),
		screenshot(t, "device-done"),
	)
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("login --device exited %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "Logged in to "+env.URL+" as "+ana.Email) {
		t.Errorf("login said %q", errOut.String())
	}
	wantWorkingCLI(t, env, dir, ana.Email)
}

// TestBrowserDevicePagesAccessible checks the device pages with axe in a
// browser session of their own: the code form, a wrong code, the consent
// page of a device request and the outcome.
func TestBrowserDevicePagesAccessible(t *testing.T) {
	axe := axeScript(t)
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, ownerEmail, password, false)
	form := url.Values{"client_id": {"chartctl"}, "scope": {"repo:read keys:write"}}
	resp, err := http.PostForm(env.URL+"/oauth/device_authorization", form)
	if err != nil {
		t.Fatal(err)
	}
	var start struct {
		Complete string `json:"verification_uri_complete"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&start); err != nil || start.Complete == "" {
		t.Fatalf("device_authorization: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	ctx := newBrowser(t)
	signInAs(t, ctx, env.URL, ownerEmail, "%2F")
	for _, p := range []struct{ name, path, ready string }{
		{"device", env.URL + "/device", `#device-form`},
		{"device-wrong-code", env.URL + "/device?user_code=BBBB-BBBB", `#device-error`},
		{"device-consent", start.Complete, `#approve`},
	} {
		run(t, ctx, p.name, chromedp.Navigate(p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)), screenshot(t, p.name))
		checkA11y(t, ctx, axe, p.name)
	}
	run(t, ctx, "approve", chromedp.Click(chromedp.CSS(`#approve`)), chromedp.WaitVisible(chromedp.CSS(`#device-done`)), screenshot(t, "device-done"))
	checkA11y(t, ctx, axe, "device-done")
}
