package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// The dashboard offers the admin permission for keys only to server
// admins, and refuses it from anyone else.
func TestDashboardKeyAdminScopeOnlyForAdmins(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "ada@example.com", "correct horse battery", false)
	env.MustUserWithPassword(t, "root@example.com", "correct horse battery", true)

	b := env.NewBrowser(t)
	b.SignIn(t, "ada@example.com", "correct horse battery")
	page := b.Get(t, "/settings/api-keys/new")
	if strings.Contains(page.Body, `value="admin"`) {
		t.Error("the key form offers admin to a non-admin")
	}
	if !strings.Contains(page.Body, `value="keys:write"`) {
		t.Error("the key form does not offer keys:write")
	}
	r := b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {page.CSRF(t)}, "name": {"x"}, "scopes": {"repo:read", "admin"}, "expiry": {"30"}})
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "Only server admins") {
		t.Errorf("non-admin key with admin: %d", r.StatusCode)
	}

	a := env.NewBrowser(t)
	a.SignIn(t, "root@example.com", "correct horse battery")
	if page := a.Get(t, "/settings/api-keys/new"); !strings.Contains(page.Body, `value="admin"`) {
		t.Error("the key form does not offer admin to an admin")
	}
}
