package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity/ldap"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit/slapdtest"
	"github.com/chartctl/chartctl/internal/web"
)

// ldapEnv is a server whose password form checks logins against the
// slapd s (StartTLS with its test CA), admins from chartctl-admins.
func ldapEnv(t *testing.T, s *slapdtest.Server, noLocal bool, userFilter string) (*oauthtest.Env, *ldap.Provider) {
	t.Helper()
	p, err := ldap.New(ldap.Config{URL: s.URL, BindDN: slapdtest.BindDN, BindPassword: slapdtest.BindPassword,
		UserBase: slapdtest.People, UserFilter: userFilter, GroupBase: slapdtest.Groups, RootCAs: s.CA.Pool})
	if err != nil {
		t.Fatal(err)
	}
	env := oauthtest.Start(t, oauthtest.Config{
		LDAP:          web.LDAPOptions{Provider: p, Policy: app.SignInPolicy{AdminGroup: "chartctl-admins"}},
		NoLocalSignIn: noLocal,
	})
	return env, p
}

// ldapSignIn posts login and password to the sign-in form of a fresh
// browser and returns the browser and the answer.
func ldapSignIn(t *testing.T, env *oauthtest.Env, login, password string) (*oauthtest.Browser, *oauthtest.Page) {
	t.Helper()
	b := env.NewBrowser(t)
	page := b.Get(t, "/signin?return_to=%2Frepositories")
	return b, b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "login": {login}, "password": {password}, "return_to": {"/repositories"}})
}

func ldapUser(t *testing.T, env *oauthtest.Env, email string) *chartctl.User {
	t.Helper()
	u, err := env.Store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return u
}

// TestLDAPSignInCreatesUserJustInTime: a directory login on the password
// form (over HTTP, against a real slapd through StartTLS) creates the user
// at the first sign-in, bound to the entry's entryUUID; a wrong password
// is refused; joining the admin group (ldapmodify) makes an admin at the
// next sign-in; local accounts keep their passwords.
func TestLDAPSignInCreatesUserJustInTime(t *testing.T) {
	s := slapdtest.Start(t)
	env, _ := ldapEnv(t, s, false, "")
	env.MustUserWithPassword(t, "carol@example.com", "a long enough password", false)

	page := env.NewBrowser(t).Get(t, "/signin")
	if !strings.Contains(page.Body, `name="login"`) || !strings.Contains(page.Body, "User name or email") || strings.Contains(page.Body, `type="email"`) {
		t.Fatalf("sign-in form without a login field:\n%s", page.Body)
	}

	if _, r := ldapSignIn(t, env, "ana", "wrong password"); r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Body, "Incorrect user name or password.") {
		t.Fatalf("wrong password: %d %s", r.StatusCode, r.Body)
	}
	if _, r := ldapSignIn(t, env, "nobody", "ana-password"); r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Body, "Incorrect user name or password.") {
		t.Fatalf("unknown login: %d %s", r.StatusCode, r.Body)
	}
	if _, err := env.Store.UserByEmail(t.Context(), "ana@example.com"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("a refused sign-in created a user: %v", err)
	}

	b, r := ldapSignIn(t, env, "ana", "ana-password")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/repositories" {
		t.Fatalf("sign-in: %d %q %s", r.StatusCode, r.Header.Get("Location"), r.Body)
	}
	u := ldapUser(t, env, "ana@example.com")
	if u.Identity.Provider != chartctl.ProviderLDAP || len(u.Identity.Subject) != 36 || u.PasswordHash != "" || u.Admin {
		t.Fatalf("user created just in time: %+v", u)
	}
	if s := b.Get(t, "/settings"); s.StatusCode != http.StatusOK || !strings.Contains(s.Body, "ana@example.com") {
		t.Fatalf("signed-in settings page: %d", s.StatusCode)
	}
	list := env.Do(t, http.MethodGet, "/v1/users", env.AdminKey, nil)
	if !strings.Contains(string(list.Body), `"identity":{"provider":"ldap","subject":"`+u.Identity.Subject+`"}`) {
		t.Fatalf("GET /v1/users: %s", list.Body)
	}

	// The same entry signs in as the same user; the admin group makes an
	// admin, leaving it takes admin away.
	s.AddToGroup("chartctl-admins", "ana")
	if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d %s", r.StatusCode, r.Body)
	}
	if again := ldapUser(t, env, "ana@example.com"); again.ID != u.ID || !again.Admin {
		t.Fatalf("after joining chartctl-admins: %+v", again)
	}
	s.RemoveFromGroup("chartctl-admins", "ana")
	if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("third sign-in: %d %s", r.StatusCode, r.Body)
	}
	if again := ldapUser(t, env, "ana@example.com"); again.Admin {
		t.Fatalf("after leaving chartctl-admins: %+v", again)
	}

	// Typing a directory user's email where the filter takes uids finds
	// no entry, but the entry is still there: nobody is disabled by it.
	if _, r := ldapSignIn(t, env, "ana@example.com", "whatever"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("ana's email with a uid filter: %d %s", r.StatusCode, r.Body)
	}
	if again := ldapUser(t, env, "ana@example.com"); again.Disabled {
		t.Fatal("a failed sign-in with ana's email disabled her although the directory has her")
	}

	// A local account signs in with its own password on the same form,
	// and a directory account never with a local one.
	if _, r := ldapSignIn(t, env, "carol@example.com", "a long enough password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("local account: %d %s", r.StatusCode, r.Body)
	}
	if n, _ := env.Store.UserCount(t.Context()); n != 3 {
		t.Fatalf("%d users, want the admin, carol and ana", n)
	}
}

// TestLDAPUnavailable: with slapd stopped, the sign-in answers a 503 page
// saying so, counts nothing against the person, and tries no local
// password; once slapd is back the same sign-in works.
func TestLDAPUnavailable(t *testing.T) {
	s := slapdtest.Start(t)
	env, _ := ldapEnv(t, s, false, "")
	if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", r.StatusCode, r.Body)
	}
	s.Stop()
	for range 12 {
		_, r := ldapSignIn(t, env, "ana", "ana-password")
		if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(r.Body, "cannot reach the company directory (LDAP)") {
			t.Fatalf("slapd stopped: %d %s", r.StatusCode, r.Body)
		}
	}
	s.Restart()
	// Twelve outages from one address did not trip its throttle (10).
	if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("slapd back: %d %s", r.StatusCode, r.Body)
	}
}

// TestLDAPThrottleBeforeBind: an address past the sign-in throttle is
// refused before any bind (decision 6): with slapd stopped it still gets
// 429, not the directory's 503.
func TestLDAPThrottleBeforeBind(t *testing.T) {
	s := slapdtest.Start(t)
	env, _ := ldapEnv(t, s, false, "")
	for range 10 {
		if _, r := ldapSignIn(t, env, "ana", "wrong"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", r.StatusCode)
		}
	}
	s.Stop()
	if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("throttled address with slapd stopped: %d %s", r.StatusCode, r.Body)
	}
}

// TestLDAPGoneUserDisabledAtSignIn: a user the directory no longer finds
// is disabled at their next sign-in attempt, and their API key stops
// working at once.
func TestLDAPGoneUserDisabledAtSignIn(t *testing.T) {
	s := slapdtest.Start(t)
	// People sign in with their uid or their email.
	env, _ := ldapEnv(t, s, false, "(|(uid=%s)(mail=%s))")
	if _, r := ldapSignIn(t, env, "ana@example.com", "ana-password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", r.StatusCode, r.Body)
	}
	u := ldapUser(t, env, "ana@example.com")
	key := env.MustKey(t, u, chartctl.ScopeRepoRead)
	if r := env.Do(t, http.MethodGet, "/v1/user", key, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("ana's key: %d %s", r.StatusCode, r.Body)
	}
	s.Delete(slapdtest.User{UID: "ana"}.DN())
	if _, r := ldapSignIn(t, env, "ana@example.com", "ana-password"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in of a deleted entry: %d %s", r.StatusCode, r.Body)
	}
	if got := ldapUser(t, env, "ana@example.com"); !got.Disabled {
		t.Fatalf("the gone user is not disabled: %+v", got)
	}
	if r := env.Do(t, http.MethodGet, "/v1/user", key, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the gone user's key: %d %s", r.StatusCode, r.Body)
	}
}

// TestLDAPDirectoryCheck: the periodic check (run here by hand, as its
// ticker would) disables a user with an active API key whom the directory
// no longer has, leaves users without keys to their next sign-in, runs on
// one replica per interval (lease), and disables nobody during an outage.
func TestLDAPDirectoryCheck(t *testing.T) {
	s := slapdtest.Start(t)
	env, p := ldapEnv(t, s, false, "")
	for _, login := range []string{"ana", "bob", "root"} {
		if _, r := ldapSignIn(t, env, login, login+"-password"); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in %s: %d %s", login, r.StatusCode, r.Body)
		}
	}
	ana, bob := ldapUser(t, env, "ana@example.com"), ldapUser(t, env, "bob@example.com")
	key := env.MustKey(t, ana, chartctl.ScopeRepoRead)
	env.MustKey(t, ldapUser(t, env, "root@example.com"), chartctl.ScopeRepoRead)
	s.Delete(slapdtest.User{UID: "ana"}.DN())
	s.Delete(slapdtest.User{UID: "bob"}.DN())

	a := env.App()
	// An outage disables nobody.
	s.Stop()
	if disabled, ran, err := a.CheckDirectoryUsers(t.Context(), chartctl.ProviderLDAP, p, app.DirectoryCheckInterval); err == nil || !ran || len(disabled) != 0 {
		t.Fatalf("check during an outage: %v %v %v", disabled, ran, err)
	}
	if got := ldapUser(t, env, "ana@example.com"); got.Disabled {
		t.Fatal("an outage disabled ana")
	}
	s.Restart()
	// The lease taken by the run above is this replica's: it runs again.
	disabled, ran, err := a.CheckDirectoryUsers(t.Context(), chartctl.ProviderLDAP, p, app.DirectoryCheckInterval)
	if err != nil || !ran || len(disabled) != 1 || disabled[0].ID != ana.ID {
		t.Fatalf("check: %v %v %v", disabled, ran, err)
	}
	env.InvalidateCredentials()
	if got := ldapUser(t, env, "ana@example.com"); !got.Disabled {
		t.Fatal("ana is not disabled")
	}
	if r := env.Do(t, http.MethodGet, "/v1/user", key, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("ana's key after the check: %d %s", r.StatusCode, r.Body)
	}
	// Bob has no key: left to his next sign-in. Root is still there.
	if got := ldapUser(t, env, "bob@example.com"); got.Disabled || got.ID != bob.ID {
		t.Fatalf("bob (no key) was disabled by the check: %+v", got)
	}
	if got := ldapUser(t, env, "root@example.com"); got.Disabled {
		t.Fatal("root, still in the directory, was disabled")
	}

	// Another replica does not run while this one's lease lasts.
	// (The same App under another replica's name: nothing else in this
	// test reads it meanwhile.)
	mine := a.Replica
	a.Replica = "replica-2"
	_, ran, err = a.CheckDirectoryUsers(t.Context(), chartctl.ProviderLDAP, p, app.DirectoryCheckInterval)
	a.Replica = mine
	if err != nil || ran {
		t.Fatalf("second replica ran during the lease: %v %v", ran, err)
	}
}

// TestLDAPWithLocalSignInOff: --local-signin=false keeps the form for
// directory logins and local admins, and refuses local non-admins.
func TestLDAPWithLocalSignInOff(t *testing.T) {
	s := slapdtest.Start(t)
	env, _ := ldapEnv(t, s, true, "")
	env.MustUserWithPassword(t, "carol@example.com", "a long enough password", false)
	env.MustUserWithPassword(t, "boss@example.com", "a long enough password", true)
	if page := env.NewBrowser(t).Get(t, "/signin"); !strings.Contains(page.Body, `name="login"`) {
		t.Fatalf("/signin with LDAP and local sign-in off has no form:\n%s", page.Body)
	}
	if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("LDAP user: %d %s", r.StatusCode, r.Body)
	}
	if _, r := ldapSignIn(t, env, "carol@example.com", "a long enough password"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("local non-admin: %d", r.StatusCode)
	}
	if _, r := ldapSignIn(t, env, "boss@example.com", "a long enough password"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("local admin: %d %s", r.StatusCode, r.Body)
	}
}

// TestLDAPForOAuthApps: the authorization page `chartctl login` opens
// sends the browser to the same sign-in form, which takes a directory
// login and comes back to the consent page.
func TestLDAPForOAuthApps(t *testing.T) {
	s := slapdtest.Start(t)
	env, _ := ldapEnv(t, s, false, "")
	_, challenge := oauthtest.PKCE()
	params := url.Values{"response_type": {"code"}, "client_id": {"chartctl"}, "redirect_uri": {"http://127.0.0.1:9999/callback"}, "scope": {"repo:read"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"xyz"}}
	b := env.NewBrowser(t)
	r := b.Get(t, "/oauth/authorize?"+params.Encode())
	if r.StatusCode != http.StatusSeeOther && r.StatusCode != http.StatusFound {
		t.Fatalf("authorize before sign-in: %d %s", r.StatusCode, r.Body)
	}
	loc, _ := url.Parse(r.Header.Get("Location"))
	signin := b.Get(t, loc.RequestURI())
	if !strings.Contains(signin.Body, `name="login"`) {
		t.Fatalf("the app's sign-in page takes no login:\n%s", signin.Body)
	}
	form := signin.HiddenFields()
	form.Set("login", "ana")
	form.Set("password", "ana-password")
	done := b.PostForm(t, "/signin", form)
	if done.StatusCode != http.StatusSeeOther || !strings.HasPrefix(done.Header.Get("Location"), "/oauth/authorize?") {
		t.Fatalf("sign-in for the app: %d %q %s", done.StatusCode, done.Header.Get("Location"), done.Body)
	}
	consent := b.Get(t, done.Header.Get("Location"))
	if consent.StatusCode != http.StatusOK || !strings.Contains(consent.Body, `class="consent-actions"`) {
		t.Fatalf("consent page after LDAP sign-in: %d %s", consent.StatusCode, consent.Body)
	}
}

// TestLDAPGroupsSetBoundTeams: a team bound to a directory group tracks
// it at each LDAP sign-in: added to the group with ldapmodify, the user
// becomes a member at the next sign-in; removed from it, no longer; each
// change is audited.
func TestLDAPGroupsSetBoundTeams(t *testing.T) {
	s := slapdtest.Start(t)
	env, _ := ldapEnv(t, s, false, "")
	if r := env.DoJSON(t, http.MethodPost, "/v1/organizations", env.AdminKey, map[string]any{"name": "acme"}); r.StatusCode != http.StatusOK {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	for name, group := range map[string]string{"devs": "developers", "ops": "chartctl-admins"} {
		if r := env.DoJSON(t, http.MethodPost, "/v1/teams", env.AdminKey, map[string]any{"name": name, "organization": "acme", "idp_groups": []string{group}}); r.StatusCode != http.StatusOK {
			t.Fatalf("create bound team %s: %d %s", name, r.StatusCode, r.Body)
		}
	}
	signIn := func() {
		t.Helper()
		if _, r := ldapSignIn(t, env, "ana", "ana-password"); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in: %d %s", r.StatusCode, r.Body)
		}
	}
	signIn()
	if d, o := teamEmails(t, env, "devs"), teamEmails(t, env, "ops"); !slices.Equal(d, []string{"ana@example.com"}) || len(o) != 0 {
		t.Fatalf("after the first sign-in: devs %q, ops %q", d, o)
	}
	s.AddToGroup("chartctl-admins", "ana")
	signIn()
	if o := teamEmails(t, env, "ops"); !slices.Equal(o, []string{"ana@example.com"}) {
		t.Fatalf("after joining chartctl-admins: ops %q", o)
	}
	if audited(t, env, "team.member_add", "ops/ana@example.com") != 1 {
		t.Fatal("joining ops is not audited")
	}
	s.RemoveFromGroup("chartctl-admins", "ana")
	signIn()
	if o := teamEmails(t, env, "ops"); len(o) != 0 {
		t.Fatalf("after leaving chartctl-admins: ops %q", o)
	}
	if audited(t, env, "team.member_remove", "ops/ana@example.com") != 1 {
		t.Fatal("leaving ops is not audited")
	}
	if d := teamEmails(t, env, "devs"); !slices.Equal(d, []string{"ana@example.com"}) {
		t.Fatalf("devs after the changes to another group: %q", d)
	}
}
