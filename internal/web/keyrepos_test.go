package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// The dashboard's key form takes repository patterns, through the same
// application path as /v1: a bad pattern is a message on the form, good
// ones restrict the key.
func TestKeyFormRestrictsToRepositories(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "password123", false)
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "password123")
	page := b.Get(t, "/settings/api-keys/new")
	if !strings.Contains(page.Body, `name="repositories"`) {
		t.Fatal("the key form has no repositories field")
	}
	csrf := page.CSRF(t)
	post := func(name, repos string) *oauthtest.Page {
		return b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {csrf}, "name": {name}, "scopes": {"repo:read"}, "expiry": {"30"}, "repositories": {repos}})
	}
	r := post("bad", "acme-[")
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, `id="form-error"`) || !strings.Contains(r.Body, "not a valid glob") || !strings.Contains(r.Body, `value="acme-["`) {
		t.Fatalf("a bad pattern: %d, want 400 with the message and the field kept:\n%s", r.StatusCode, r.Body)
	}
	if r := post("ci", " acme-charts, web-* ,"); r.StatusCode != http.StatusOK {
		t.Fatalf("a restricted key: %d\n%s", r.StatusCode, r.Body)
	}
	if r := post("all", ""); r.StatusCode != http.StatusOK {
		t.Fatalf("an unrestricted key: %d\n%s", r.StatusCode, r.Body)
	}
	if list := b.Get(t, "/settings/api-keys"); !strings.Contains(list.Body, "<code>acme-charts</code>, <code>web-*</code>") {
		t.Fatalf("the key list does not show the key's repositories:\n%s", list.Body)
	}
	keys, err := env.Store.APIKeys(t.Context(), mustUserID(t, env, "a@example.com"))
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys: %d (%v), want 2", len(keys), err)
	}
	for _, k := range keys {
		want := []string(nil)
		if k.Name == "ci" {
			want = []string{"acme-charts", "web-*"}
		}
		if !slices.Equal(k.Repositories, want) {
			t.Fatalf("key %s: repositories %q, want %q", k.Name, k.Repositories, want)
		}
	}
}
