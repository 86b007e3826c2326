package web_test

import (
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// A signed-in session carries the user's repository grants, as API keys
// do: a grant to someone outside the organization shows the repository on
// the dashboard at once, and its revocation hides it again.
func TestDashboardFollowsRepositoryGrants(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "guest@example.com", "password123", false)
	for _, req := range []struct {
		path string
		body any
	}{
		{"/v1/organizations", map[string]string{"name": "acme"}},
		{"/v1/repositories", map[string]string{"name": "acme-charts", "organization": "acme"}},
	} {
		if r := env.DoJSON(t, http.MethodPost, req.path, env.AdminKey, req.body); r.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", req.path, r.StatusCode, r.Body)
		}
	}
	b := env.NewBrowser(t)
	b.SignIn(t, "guest@example.com", "password123")
	if p := b.Get(t, "/repositories/acme-charts"); p.StatusCode != http.StatusNotFound {
		t.Fatalf("a private repository before any grant: %d", p.StatusCode)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/repositories/acme-charts/access", env.AdminKey, client.GrantRequest{User: "guest@example.com", Role: "read"}); r.StatusCode != http.StatusCreated {
		t.Fatalf("grant: %d %s", r.StatusCode, r.Body)
	}
	if p := b.Get(t, "/repositories/acme-charts"); p.StatusCode != http.StatusOK {
		t.Fatalf("the repository after a read grant: %d", p.StatusCode)
	}
	// read is not maintain: no settings page.
	if p := b.Get(t, "/repositories/acme-charts/settings"); p.StatusCode != http.StatusForbidden {
		t.Fatalf("the settings of a repository one reads: %d", p.StatusCode)
	}
	if r := env.Do(t, http.MethodDelete, "/v1/repositories/acme-charts/access/user/guest@example.com", env.AdminKey, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.StatusCode, r.Body)
	}
	if p := b.Get(t, "/repositories/acme-charts"); p.StatusCode != http.StatusNotFound {
		t.Fatalf("the repository after the revocation: %d", p.StatusCode)
	}
}
