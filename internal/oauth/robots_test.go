package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// TestRobotIsNoPerson: a robot account's stand-in user is never an
// account: its user name and secret do not sign in to the dashboard, its
// secret as a bearer opens no dashboard page and no consent page (so it
// can authorize no OAuth application), and it cannot create API keys.
func TestRobotIsNoPerson(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	if r := env.DoJSON(t, http.MethodPost, "/v1/organizations", env.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	r := env.DoJSON(t, http.MethodPost, "/v1/organizations/acme/robots", env.AdminKey,
		map[string]any{"name": "ci", "repositories": []string{"acme-*"}, "permissions": []string{"push", "delete"}})
	var out struct{ Data client.Robot }
	r.JSON(t, &out)
	if r.StatusCode != 200 || out.Data.Secret == "" {
		t.Fatalf("create robot: %d %s", r.StatusCode, r.Body)
	}
	secret := out.Data.Secret

	b := env.NewBrowser(t)
	page := b.Get(t, "/signin")
	signin := b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"robot$acme+ci"}, "password": {secret}, "return_to": {"/"}})
	if signin.StatusCode == http.StatusSeeOther {
		t.Fatalf("the robot signed in to the dashboard (Location %q)", signin.Header.Get("Location"))
	}
	for _, c := range signin.Cookies() {
		if c.Name == "chartctl_session" && c.Value != "" {
			t.Fatalf("the robot got a session cookie")
		}
	}

	// The dashboard and the consent page know sessions, not bearers.
	app := env.MustClient(t, "third party", false, "https://app.example.com/cb")
	_, challenge := oauthtest.PKCE()
	authorize := "/oauth/authorize?" + url.Values{"client_id": {app.ClientID}, "redirect_uri": {"https://app.example.com/cb"}, "response_type": {"code"},
		"scope": {"repo:read"}, "state": {"s"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}.Encode()
	for _, path := range []string{"/settings/api-keys", "/settings/api-keys/new", authorize} {
		req, err := http.NewRequest(http.MethodGet, env.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if (resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound) || !strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
			t.Errorf("GET %s with the robot's secret: %d Location %q, want the sign-in page", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	// Nor keys through the API.
	if r := env.DoJSON(t, http.MethodPost, "/v1/user/api-keys", secret, map[string]any{"name": "k", "scopes": []string{"repo:read"}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("a robot created an API key: %d %s", r.StatusCode, r.Body)
	}
}
