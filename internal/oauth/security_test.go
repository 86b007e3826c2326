package oauth_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestRegisterClientNeedsEveryScope: a server admin's narrow credential (a
// read-only CI key, or an access token a third-party app obtained with
// repo:read) must not register OAuth clients. Otherwise whoever holds it
// registers a look-alike application with their own redirect URI and
// phishes every user of the server through this server's own consent page
// for all scopes: a read-only credential escalated to anyone's account.
func TestRegisterClientNeedsEveryScope(t *testing.T) {
	env, app := setup(t)
	admin := env.MustUserWithPassword(t, "root@example.com", "admin password!", true)
	readKey := env.MustKey(t, admin, chartctl.ScopeRepoRead)
	almostAll := env.MustKey(t, admin, chartctl.ScopeRepoWrite, chartctl.ScopeTeamWrite, chartctl.ScopeOrgRead)

	b := env.NewBrowser(t)
	b.SignIn(t, "root@example.com", "admin password!")
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	tok := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	if tok.status != http.StatusOK {
		t.Fatalf("exchange: %d %v", tok.status, tok.body)
	}

	req := client.CreateOAuthClientRequest{Name: "chartctl CLI", RedirectURIs: []string{"https://attacker.example/cb"}}
	for name, cred := range map[string]string{"repo:read key": readKey, "key without org:write": almostAll, "repo:read access token": tok.str("access_token")} {
		r := env.DoJSON(t, http.MethodPost, "/v1/oauth-clients", cred, req)
		if r.StatusCode != http.StatusForbidden || r.ErrorCode() != "forbidden" {
			t.Errorf("admin's %s registered a client: %d %s", name, r.StatusCode, r.Body)
		}
		if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) {
			t.Errorf("admin's %s: WWW-Authenticate %q", name, h)
		}
	}
	// An all-scope admin credential still registers clients.
	if c := env.MustClient(t, "Release Bot", false, "https://release.example/cb"); c.ClientSecret == "" {
		t.Errorf("all-scope admin key: %+v", c)
	}
}
