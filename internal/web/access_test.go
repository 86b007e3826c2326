package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// setupAccess is setupRobots' server with a trusted publisher on ci-push
// and robot other-bot, whose pattern does not name internal-charts.
func setupAccess(t *testing.T) *robotCatalog {
	t.Helper()
	c := setupRobots(t)
	c.must(t, http.MethodPost, "/v1/organizations/acme/robots/ci-push/publishers", client.PublisherRequest{
		Issuer: "https://token.actions.githubusercontent.com", Audience: "https://charts.acme.test", Claims: map[string]string{"repository": "acme/charts", "ref": "refs/heads/main"}})
	c.must(t, http.MethodPost, "/v1/organizations/acme/robots", client.CreateRobotRequest{Name: "other-bot", Repositories: []string{"platform-*"}, Permissions: []string{"pull"}})
	return c
}

const accessPath = "/repositories/internal-charts/access"

// has reports whether page has an element with id.
func has(t *testing.T, page, id string) bool {
	t.Helper()
	_, ok := textOf(t, page, byID(id))
	return ok
}

// byAttr matches elements whose attribute key is val.
func byAttr(key, val string) func(*html.Node) bool {
	return func(n *html.Node) bool {
		for _, a := range n.Attr {
			if a.Key == key && a.Val == val {
				return true
			}
		}
		return false
	}
}

// The Access tab shows each of its lists to whom the application shows
// it: the organization's owner (admin of the repository) sees the grants
// with the grant form, the robots that name the repository and their
// trusted publishers; a maintainer sees the robots but neither the grants
// nor the publishers, each replaced by the reason; a member sees nothing
// there (403) and an outsider not even the repository (404). The
// repository page links the tab only for those it shows something to.
func TestAccessTabByRole(t *testing.T) {
	c := setupAccess(t)

	owner := c.signedIn(t, ownerEmail)
	p := owner.Get(t, accessPath)
	if p.StatusCode != http.StatusOK {
		t.Fatalf("owner: %d %s", p.StatusCode, p.Body)
	}
	for _, id := range []string{"grant-form", "no-grants", "access-robots-table"} {
		if !has(t, p.Body, id) {
			t.Errorf("the owner's Access tab lacks #%s", id)
		}
	}
	robots, _ := textOf(t, p.Body, byID("access-robots-table"))
	for _, want := range []string{"ci-push", "push", "https://token.actions.githubusercontent.com", "https://charts.acme.test", "repository=acme/charts", "ref=refs/heads/main"} {
		if !strings.Contains(robots, want) {
			t.Errorf("robots %q lack %q", robots, want)
		}
	}
	if strings.Contains(robots, "other-bot") {
		t.Errorf("robots list a robot whose patterns do not name the repository: %q", robots)
	}
	if !strings.Contains(owner.Get(t, "/repositories/internal-charts").Body, `id="repo-access"`) {
		t.Error("the repository page does not link the Access tab for the owner")
	}
	if pubs, _ := textOf(t, owner.Get(t, "/organizations/acme/robots/ci-push").Body, byID("publishers-table")); !strings.Contains(pubs, "repository=acme/charts") {
		t.Errorf("the robot's page lists publishers %q", pubs)
	}

	maint := c.signedIn(t, maintainerEmail)
	p = maint.Get(t, accessPath)
	if p.StatusCode != http.StatusOK {
		t.Fatalf("maintainer: %d %s", p.StatusCode, p.Body)
	}
	if has(t, p.Body, "grant-form") || has(t, p.Body, "grants-table") {
		t.Error("a maintainer sees the grants or the grant form")
	}
	if note, _ := textOf(t, p.Body, byID("grants-hidden")); !strings.Contains(note, "admin") {
		t.Errorf("the maintainer's grants note %q does not name the admin role", note)
	}
	if robots, _ := textOf(t, p.Body, byID("access-robots-table")); !strings.Contains(robots, "ci-push") || strings.Contains(robots, "acme/charts") {
		t.Errorf("a maintainer's robots: %q, want ci-push without its publishers", robots)
	}
	if !strings.Contains(maint.Get(t, "/repositories/internal-charts").Body, `id="repo-access"`) {
		t.Error("the repository page does not link the Access tab for a maintainer")
	}

	member := c.signedIn(t, memberEmail)
	if p := member.Get(t, accessPath); p.StatusCode != http.StatusForbidden || !strings.Contains(p.Body, "admin") {
		t.Errorf("member: %d, want 403 naming the admin role:\n%s", p.StatusCode, p.Body)
	}
	if strings.Contains(member.Get(t, "/repositories/internal-charts").Body, `id="repo-access"`) {
		t.Error("the repository page links the Access tab for a member")
	}

	out := c.signedIn(t, outsider)
	for _, path := range []string{accessPath, "/repositories/nowhere/access"} {
		if p := out.Get(t, path); p.StatusCode != http.StatusNotFound {
			t.Errorf("outsider %s: %d, want 404", path, p.StatusCode)
		}
	}
	// A public repository: the outsider sees it, but nothing on its tab.
	if p := out.Get(t, "/repositories/platform-charts/access"); p.StatusCode != http.StatusForbidden {
		t.Errorf("outsider, public repository: %d, want 403", p.StatusCode)
	}

	anon := c.NewBrowser(t)
	if p := anon.Get(t, accessPath); p.StatusCode != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/signin") {
		t.Errorf("anonymous: %d %q, want the sign-in page", p.StatusCode, p.Header.Get("Location"))
	}

	// A personal repository takes user grants only and has no robots.
	p = owner.Get(t, "/repositories/empty-repo/access")
	if p.StatusCode != http.StatusOK || !has(t, p.Body, "grant-form") || !has(t, p.Body, "robots-hidden") || !strings.Contains(p.Body, `id="grant-kind-team" name="kind" value="team" disabled`) {
		t.Errorf("personal repository: %d\n%s", p.StatusCode, p.Body)
	}
}

// The owner grants a team and a user roles through the form and revokes
// them with the Revoke buttons; the grants take effect at once (the user
// sees the private repository, then not). Bad input is a message on the
// form, which keeps what was typed; others' posts are refused.
func TestAccessTabGrantAndRevoke(t *testing.T) {
	c := setupAccess(t)
	c.must(t, http.MethodPost, "/v1/organizations", map[string]string{"name": "globex"})
	c.must(t, http.MethodPost, "/v1/teams", map[string]string{"name": "globex-team", "organization": "globex"})
	owner := c.signedIn(t, ownerEmail)
	csrf := owner.Get(t, accessPath).CSRF(t)
	grant := func(kind, name, role string) *oauthtest.Page {
		return owner.PostForm(t, accessPath, url.Values{"csrf_token": {csrf}, "kind": {kind}, "name": {name}, "role": {role}})
	}

	r := grant("team", "platform", "write")
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("grant a team: %d %s", r.StatusCode, r.Body)
	}
	p := owner.Get(t, r.Header.Get("Location"))
	if row, _ := textOf(t, p.Body, byAttr("data-grant", "team:platform")); !strings.Contains(row, "write") {
		t.Errorf("team grant row %q", row)
	}
	if !strings.Contains(p.Body, "The team platform now has the write role here.") {
		t.Errorf("no notice after the grant:\n%s", p.Body)
	}

	out := c.signedIn(t, outsider)
	if s := out.Get(t, "/repositories/internal-charts").StatusCode; s != http.StatusNotFound {
		t.Fatalf("outsider before the grant: %d", s)
	}
	if r := grant("user", strings.ToUpper(outsider), "read"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("grant a user: %d %s", r.StatusCode, r.Body)
	}
	if s := out.Get(t, "/repositories/internal-charts").StatusCode; s != http.StatusOK {
		t.Errorf("outsider after a read grant: %d, want 200", s)
	}
	// Granting again replaces the role.
	if r := grant("user", outsider, "admin"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("grant again: %d %s", r.StatusCode, r.Body)
	}
	if p := out.Get(t, accessPath); p.StatusCode != http.StatusOK || !has(t, p.Body, "grant-form") || !has(t, p.Body, "robots-hidden") {
		t.Errorf("a user granted admin: %d, want the grants with the form and the robots hidden", p.StatusCode)
	}

	for _, bad := range []struct{ kind, name, role, want string }{
		{"team", "nope", "read", "not found"},
		{"team", "globex-team", "read", "belongs to organization"},
		{"user", "nobody@example.com", "read", "must have an account"},
		{"user", "not-an-email", "read", "email"},
		{"robot", "ci-push", "read", "a team or a user"},
		{"team", "platform", "superuser", "read, write, maintain or admin"},
		{"team", "", "read", "team's name"},
	} {
		r := grant(bad.kind, bad.name, bad.role)
		msg, _ := textOf(t, r.Body, byID("form-error"))
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(msg, bad.want) {
			t.Errorf("grant %s %q %s: %d %q, want 400 saying %q", bad.kind, bad.name, bad.role, r.StatusCode, msg, bad.want)
		}
		if bad.name != "" && valueOf(t, r.Body, "grant-name") != bad.name {
			t.Errorf("grant %s %q: the form lost the name", bad.kind, bad.name)
		}
	}

	// Others' posts change nothing.
	maint := c.signedIn(t, maintainerEmail)
	mcsrf := maint.Get(t, accessPath).CSRF(t)
	if r := maint.PostForm(t, accessPath, url.Values{"csrf_token": {mcsrf}, "kind": {"user"}, "name": {maintainerEmail}, "role": {"admin"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a maintainer grants: %d, want 403", r.StatusCode)
	}
	if r := maint.PostForm(t, accessPath+"/team/platform/revoke", url.Values{"csrf_token": {mcsrf}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a maintainer revokes: %d, want 403", r.StatusCode)
	}
	member := c.signedIn(t, memberEmail)
	if r := member.PostForm(t, "/repositories/internal-charts/access/team/platform/revoke", url.Values{"csrf_token": {member.Get(t, "/settings").CSRF(t)}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a member revokes: %d, want 403", r.StatusCode)
	}
	if r := owner.PostForm(t, accessPath, url.Values{"kind": {"user"}, "name": {memberEmail}, "role": {"admin"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a grant without the form's token: %d, want 403", r.StatusCode)
	}
	// A made-up notice is not shown.
	if p := owner.Get(t, accessPath+"?done=granted&kind=team&name=nope"); strings.Contains(p.Body, "now has") {
		t.Error("the tab confirms a grant that does not exist")
	}

	var list struct{ Data []client.Grant }
	c.Do(t, http.MethodGet, "/v1/repositories/internal-charts/access", c.ownerKey, nil).JSON(t, &list)
	if len(list.Data) != 2 {
		t.Fatalf("the API lists %+v after the forms", list.Data)
	}

	for _, path := range []string{accessPath + "/user/" + url.PathEscape(outsider) + "/revoke", accessPath + "/team/platform/revoke"} {
		r := owner.PostForm(t, path, url.Values{"csrf_token": {csrf}})
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("revoke %s: %d %s", path, r.StatusCode, r.Body)
		}
		if p := owner.Get(t, r.Header.Get("Location")); !strings.Contains(p.Body, "was revoked") {
			t.Errorf("no notice after revoking %s", path)
		}
	}
	if p := owner.Get(t, accessPath); !has(t, p.Body, "no-grants") {
		t.Errorf("grants left after revoking both:\n%s", p.Body)
	}
	if s := out.Get(t, "/repositories/internal-charts").StatusCode; s != http.StatusNotFound {
		t.Errorf("outsider after the revocation: %d, want 404", s)
	}
	for _, path := range []string{accessPath + "/team/platform/revoke", accessPath + "/robot/ci-push/revoke"} {
		if r := owner.PostForm(t, path, url.Values{"csrf_token": {csrf}}); r.StatusCode != http.StatusNotFound {
			t.Errorf("revoke a grant that is not there (%s): %d, want 404", path, r.StatusCode)
		}
	}
}
