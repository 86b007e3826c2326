package web_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity/oidc"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit/dextest"
	"github.com/chartctl/chartctl/internal/web"
)

// newDexBrowser is newBrowser for pages of a Dex under a test CA: the
// browser accepts its certificate (the test CA is not in the profile's
// trust store).
func newDexBrowser(t *testing.T) context.Context {
	t.Helper()
	return newBrowser(t, chromedp.Flag("ignore-certificate-errors", true))
}

// TestBrowserSSOThroughDex signs in through a real Dex in a real browser:
// chartctl's sign-in page, Dex's login form, back on the dashboard signed
// in, the user created just in time and seeing the repositories signed-in
// users see; a second sign-in in another browser is the same user; a
// member of the admin group is made an admin.
func TestBrowserSSOThroughDex(t *testing.T) {
	chromium(t)
	late := &lateSSO{}
	env := oauthtest.Start(t, oauthtest.Config{
		SSO: web.SSOOptions{Provider: late, Name: "Dex", Key: web.SSOKey("dex"), Policy: app.SignInPolicy{AdminGroup: "chartctl-admins"}},
	})
	dex := dextest.Start(t, dextest.Options{RedirectURI: env.URL + "/signin/oidc/callback"})
	p, err := oidc.New(t.Context(), oidc.Config{Issuer: dex.Issuer, ClientID: dex.ClientID, ClientSecret: dex.ClientSecret,
		RedirectURL: env.URL + "/signin/oidc/callback", Scopes: []string{"groups"}, HTTPClient: dex.Client()})
	if err != nil {
		t.Fatal(err)
	}
	late.p = p
	env.MustRepo(t, "platform-charts", "internal")
	// Teams bound to Dex's groups: the groups claim of each sign-in sets
	// their members (ana is in developers; root in developers and
	// chartctl-admins).
	if err := env.Store.CreateOrganization(t.Context(), &chartctl.Organization{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	for name, group := range map[string]string{"devs": "developers", "admins": "chartctl-admins"} {
		if err := env.Store.CreateTeam(t.Context(), &chartctl.Team{Name: name, Organization: "acme", IDPGroups: []string{group}}); err != nil {
			t.Fatal(err)
		}
	}
	members := func(team string) []string {
		ms, err := env.Store.Members(t.Context(), team)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Email+"="+string(m.Role))
		}
		slices.Sort(out)
		return out
	}

	signInThroughDex := func(user dextest.User, shot string) (context.Context, *chartctl.User) {
		t.Helper()
		ctx := newDexBrowser(t)
		run(t, ctx, "chartctl sign-in page",
			chromedp.Navigate(env.URL+"/signin?return_to=%2Frepositories"),
			chromedp.WaitVisible(chromedp.CSS(`#signin-sso`)),
			screenshot(t, shot+"-signin"),
			chromedp.Click(chromedp.CSS(`#signin-sso`)),
		)
		run(t, ctx, "Dex's login form",
			chromedp.WaitVisible(chromedp.CSS(`#login`)),
			screenshot(t, shot+"-dex"),
			chromedp.SendKeys(chromedp.CSS(`#login`), user.Email),
			chromedp.SendKeys(chromedp.CSS(`#password`), user.Password),
			chromedp.Click(chromedp.CSS(`#submit-login`)),
		)
		// A bound on the wait, so that a failure can still say where the
		// browser ended up; not a timing assertion.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`a[href="/repositories/platform-charts"]`)))
		cancel()
		if err != nil {
			loc := get(t, ctx, "location", chromedp.Location())
			body := get(t, ctx, "page text", chromedp.Text(chromedp.CSS(`body`)))
			t.Fatalf("not back on the dashboard signed in (%v): at %s:\n%s", err, loc, body)
		}
		run(t, ctx, "repositories", screenshot(t, shot+"-repositories"))
		if h := get(t, ctx, "heading", chromedp.Text(chromedp.CSS(`h1`))); h != "Repositories" {
			t.Fatalf("after signing in through Dex the page is %q", h)
		}
		u, err := env.Store.UserByEmail(t.Context(), user.Email)
		if err != nil {
			t.Fatalf("user %s after signing in: %v", user.Email, err)
		}
		return ctx, u
	}

	ana := dex.User(t, "ana")
	_, first := signInThroughDex(ana, "dex-ana")
	if first.Identity.Provider != chartctl.ProviderOIDC || first.Identity.Issuer != dex.Issuer || first.Identity.Subject == "" || first.PasswordHash != "" || first.Admin {
		t.Fatalf("user created just in time: %+v", first)
	}
	_, second := signInThroughDex(ana, "dex-ana-again")
	if second.ID != first.ID {
		t.Fatalf("a second sign-in made another user: %s, then %s", first.ID, second.ID)
	}
	if n, _ := env.Store.UserCount(t.Context()); n != 2 {
		t.Fatalf("%d users, want the admin and ana", n)
	}
	if d, a := members("devs"), members("admins"); !slices.Equal(d, []string{first.Email + "=member"}) || len(a) != 0 {
		t.Fatalf("bound teams after ana's sign-in: devs %q, admins %q", d, a)
	}
	_, root := signInThroughDex(dex.User(t, "root"), "dex-root")
	if !root.Admin {
		t.Fatalf("a member of the admin group is not an admin: %+v", root)
	}
	if a := members("admins"); !slices.Equal(a, []string{root.Email + "=member"}) || len(members("devs")) != 2 {
		t.Fatalf("bound teams after root's sign-in: devs %q, admins %q", members("devs"), a)
	}
}
