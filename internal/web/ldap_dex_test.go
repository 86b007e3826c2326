package web_test

import (
	"crypto/tls"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity/oidc"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit/dextest"
	"github.com/chartctl/chartctl/internal/testkit/slapdtest"
	"github.com/chartctl/chartctl/internal/web"
)

var formAction = regexp.MustCompile(`<form[^>]*action="([^"]*)"`)

// TestSSOThroughDexLDAPConnector: the same slapd behind Dex's LDAP
// connector. chartctl's OIDC sign-in goes to Dex, whose login form checks
// the directory; the user comes back, is created just in time with the
// groups Dex read from the directory (the admin group makes an admin).
// Driven over HTTP: the browser flow itself is TestBrowserSSOThroughDex.
func TestSSOThroughDexLDAPConnector(t *testing.T) {
	s := slapdtest.Start(t)
	late := &lateSSO{}
	env := oauthtest.Start(t, oauthtest.Config{
		SSO: web.SSOOptions{Provider: late, Name: "Dex", Key: web.SSOKey("dex"), Policy: app.SignInPolicy{AdminGroup: "chartctl-admins"}},
	})
	dex := dextest.Start(t, dextest.Options{RedirectURI: env.URL + "/signin/oidc/callback", LDAP: &dextest.LDAPConnector{
		Host: strings.TrimPrefix(s.URL, "ldap://"), CAFile: s.CA.CertFile, BindDN: slapdtest.BindDN, BindPassword: slapdtest.BindPassword,
		UserBase: slapdtest.People, GroupBase: slapdtest.Groups}})
	p, err := oidc.New(t.Context(), oidc.Config{Issuer: dex.Issuer, ClientID: dex.ClientID, ClientSecret: dex.ClientSecret,
		RedirectURL: env.URL + "/signin/oidc/callback", Scopes: []string{"groups"}, HTTPClient: dex.Client()})
	if err != nil {
		t.Fatal(err)
	}
	late.p = p

	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: dex.CA.Pool, MinVersion: tls.VersionTLS12}}}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	// Follow redirects to Dex's login form.
	resp, body := get(env.URL + "/signin/oidc?return_to=%2Frepositories")
	for resp.StatusCode >= 300 && resp.StatusCode < 400 {
		next, _ := resp.Request.URL.Parse(resp.Header.Get("Location"))
		resp, body = get(next.String())
	}
	m := formAction.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(body, `name="login"`) {
		t.Fatalf("Dex's login page: %d %s", resp.StatusCode, body)
	}
	action, _ := resp.Request.URL.Parse(html.UnescapeString(m[1]))
	resp, err = b.PostForm(action.String(), url.Values{"login": {"root"}, "password": {"root-password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Follow Dex's redirects back to chartctl's callback.
	for resp.StatusCode >= 300 && resp.StatusCode < 400 {
		next, _ := resp.Request.URL.Parse(resp.Header.Get("Location"))
		resp, body = get(next.String())
		if strings.HasPrefix(next.String(), env.URL) {
			break
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/repositories" {
		t.Fatalf("back at chartctl: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	u, err := env.Store.UserByEmail(t.Context(), "root@example.com")
	if err != nil || u.Identity.Provider != chartctl.ProviderOIDC || u.Identity.Issuer != dex.Issuer || !u.Admin {
		t.Fatalf("user from Dex's LDAP connector: %+v, %v", u, err)
	}
}
