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

const maintainerEmail = "mona@example.com"

// robotCatalog is setupCatalog's server with robot ci-push in acme
// (patterns platform-* and internal-charts, push), a maintainer of acme,
// and the robot's secret.
type robotCatalog struct {
	*catalog
	secret string
}

func setupRobots(t *testing.T) *robotCatalog {
	t.Helper()
	c := setupCatalog(t)
	c.MustUserWithPassword(t, maintainerEmail, password, false)
	c.must(t, http.MethodPost, "/v1/teams/platform/members", map[string]string{"email": maintainerEmail, "role": "maintainer"})
	r := c.DoJSON(t, http.MethodPost, "/v1/organizations/acme/robots", c.ownerKey, client.CreateRobotRequest{
		Name: "ci-push", Description: "Publishes from CI", Repositories: []string{"platform-*", "internal-charts"}, Permissions: []string{"push"}})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("create robot: %d %s", r.StatusCode, r.Body)
	}
	var out struct{ Data client.Robot }
	r.JSON(t, &out)
	return &robotCatalog{catalog: c, secret: out.Data.Secret}
}

// pullIndex fetches internal-charts' Helm index as the robot with secret
// and returns the status.
func (c *robotCatalog) pullIndex(t *testing.T, secret string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.URL+"/helm/internal-charts/index.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("robot$acme+ci-push", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signedIn returns a browser signed in as email.
func (c *catalog) signedIn(t *testing.T, email string) *oauthtest.Browser {
	t.Helper()
	b := c.NewBrowser(t)
	b.SignIn(t, email, password)
	return b
}

// valueOf returns the value attribute of the element with id on page.
func valueOf(t *testing.T, page, id string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var val string
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && byID(id)(n) {
			for _, a := range n.Attr {
				if a.Key == "value" {
					val = a.Val
				}
			}
			return true
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if walk(ch) {
				return true
			}
		}
		return false
	}
	if !walk(doc) {
		t.Fatalf("no element #%s on the page:\n%s", id, page)
	}
	return val
}

// The robot's page shows what the robot is and when it was last used to
// the organization's maintainers and owners; only owners get the forms;
// members are refused, outsiders get the 404 page and anonymous visitors
// the sign-in page. The organization page lists the robot for the same
// people.
func TestRobotPageByRole(t *testing.T) {
	c := setupRobots(t)
	if s := c.pullIndex(t, c.secret); s != http.StatusOK {
		t.Fatalf("the robot pulls: %d", s)
	}
	const page = "/organizations/acme/robots/ci-push"

	owner := c.signedIn(t, ownerEmail)
	p := owner.Get(t, page)
	if p.StatusCode != http.StatusOK {
		t.Fatalf("owner: %d %s", p.StatusCode, p.Body)
	}
	for id, want := range map[string]string{
		"robot-repositories": "platform-*, internal-charts",
		"robot-permissions":  "push",
		"robot-status":       "Active",
		"robot-expires":      "Never",
		"robot-created-by":   ownerEmail,
	} {
		if got, _ := textOf(t, p.Body, byID(id)); got != want {
			t.Errorf("#%s: %q, want %q", id, got, want)
		}
	}
	// The pull above is the robot's last use, written before the page.
	if got, _ := textOf(t, p.Body, byID("robot-last-used")); got == "Never" || got == "" {
		t.Errorf("last used %q after a pull", got)
	}
	for _, id := range []string{"disable-robot", "rotate-robot", "delete-robot", "no-publishers"} {
		if _, ok := textOf(t, p.Body, byID(id)); !ok {
			t.Errorf("the owner's page lacks #%s", id)
		}
	}
	if org := owner.Get(t, "/organizations/acme"); !strings.Contains(org.Body, `href="/organizations/acme/robots/ci-push"`) {
		t.Errorf("the organization page does not link the robot for its owner:\n%s", org.Body)
	}

	maint := c.signedIn(t, maintainerEmail)
	p = maint.Get(t, page)
	if p.StatusCode != http.StatusOK {
		t.Fatalf("maintainer: %d %s", p.StatusCode, p.Body)
	}
	for _, id := range []string{"disable-robot", "rotate-robot", "delete-robot"} {
		if _, ok := textOf(t, p.Body, byID(id)); ok {
			t.Errorf("a maintainer's page has #%s", id)
		}
	}
	if note, _ := textOf(t, p.Body, byID("publishers-hidden")); !strings.Contains(note, "owners") {
		t.Errorf("a maintainer's publishers note %q does not say who sees them", note)
	}
	if org := maint.Get(t, "/organizations/acme"); !strings.Contains(org.Body, `id="robots-table"`) {
		t.Error("the organization page does not list robots for a maintainer")
	}
	if d := maint.Get(t, page+"/delete"); d.StatusCode != http.StatusForbidden || !strings.Contains(d.Body, "owner") {
		t.Errorf("a maintainer's delete page: %d, want 403 naming the owner role", d.StatusCode)
	}

	member := c.signedIn(t, memberEmail)
	if p := member.Get(t, page); p.StatusCode != http.StatusForbidden || !strings.Contains(p.Body, "maintainer") {
		t.Errorf("member: %d, want 403 naming the maintainer role:\n%s", p.StatusCode, p.Body)
	}
	if org := member.Get(t, "/organizations/acme"); org.StatusCode != http.StatusOK || strings.Contains(org.Body, "robots-table") || strings.Contains(org.Body, "ci-push") {
		t.Errorf("the organization page shows robots to a member: %d", org.StatusCode)
	}

	out := c.signedIn(t, outsider)
	for _, path := range []string{page, "/organizations/acme/robots/nobody", "/organizations/nowhere/robots/ci-push", page + "/delete"} {
		if p := out.Get(t, path); p.StatusCode != http.StatusNotFound {
			t.Errorf("outsider %s: %d, want 404", path, p.StatusCode)
		}
	}
	if p := owner.Get(t, "/organizations/acme/robots/nobody"); p.StatusCode != http.StatusNotFound {
		t.Errorf("owner, unknown robot: %d, want 404", p.StatusCode)
	}

	anon := c.NewBrowser(t)
	if p := anon.Get(t, page); p.StatusCode != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/signin") {
		t.Errorf("anonymous: %d %q, want the sign-in page", p.StatusCode, p.Header.Get("Location"))
	}
}

// An owner disables and enables the robot, rotates its secret (shown
// once; the old one stops at once) and deletes it after the confirmation
// page; the robot's credential follows each step at once. Others' posts
// and posts without the form's token change nothing.
func TestRobotPageManage(t *testing.T) {
	c := setupRobots(t)
	const page = "/organizations/acme/robots/ci-push"
	owner := c.signedIn(t, ownerEmail)
	csrf := owner.Get(t, page).CSRF(t)

	member := c.signedIn(t, memberEmail)
	maint := c.signedIn(t, maintainerEmail)
	mcsrf := maint.Get(t, page).CSRF(t)
	for _, b := range []struct {
		who  string
		b    *oauthtest.Browser
		csrf string
	}{{"member", member, member.Get(t, "/settings").CSRF(t)}, {"maintainer", maint, mcsrf}} {
		for _, action := range []string{"disable", "rotate", "delete"} {
			if r := b.b.PostForm(t, page+"/"+action, url.Values{"csrf_token": {b.csrf}}); r.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s: %d, want 403", b.who, action, r.StatusCode)
			}
		}
	}
	if r := owner.PostForm(t, page+"/disable", url.Values{}); r.StatusCode != http.StatusForbidden {
		t.Errorf("disable without the form's token: %d, want 403", r.StatusCode)
	}
	if s := c.pullIndex(t, c.secret); s != http.StatusOK {
		t.Fatalf("refused posts changed the robot: pull %d", s)
	}

	r := owner.PostForm(t, page+"/disable", url.Values{"csrf_token": {csrf}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d %s", r.StatusCode, r.Body)
	}
	p := owner.Get(t, r.Header.Get("Location"))
	if got, _ := textOf(t, p.Body, byID("robot-disabled")); got != "disabled" {
		t.Errorf("after disable the page says %q", got)
	}
	if !strings.Contains(p.Body, "was disabled") || !strings.Contains(p.Body, `id="enable-robot"`) {
		t.Errorf("after disable: no notice or no Enable button:\n%s", p.Body)
	}
	if s := c.pullIndex(t, c.secret); s != http.StatusUnauthorized {
		t.Errorf("a disabled robot pulls: %d, want 401", s)
	}
	if row, _ := textOf(t, owner.Get(t, "/repositories/internal-charts/access").Body, byAttr("data-robot", "ci-push")); !strings.Contains(row, "disabled") {
		t.Errorf("the Access tab's row of a disabled robot: %q", row)
	}
	if r := owner.PostForm(t, page+"/enable", url.Values{"csrf_token": {csrf}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("enable: %d %s", r.StatusCode, r.Body)
	}
	if s := c.pullIndex(t, c.secret); s != http.StatusOK {
		t.Errorf("an enabled robot pulls: %d, want 200", s)
	}

	if r := owner.PostForm(t, page+"/rotate", url.Values{"csrf_token": {csrf}, "grace": {"forever"}}); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, `id="form-error"`) {
		t.Errorf("rotate with a bad grace: %d, want 400 with the message", r.StatusCode)
	}
	r = owner.PostForm(t, page+"/rotate", url.Values{"csrf_token": {csrf}, "grace": {"0s"}})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("rotate: %d %s", r.StatusCode, r.Body)
	}
	secret := valueOf(t, r.Body, "new-secret")
	if secret == "" || secret == c.secret {
		t.Fatalf("rotate showed secret %q", secret)
	}
	if got, _ := textOf(t, r.Body, byID("old-secret")); got != "no longer works" {
		t.Errorf("old secret: %q", got)
	}
	if s := c.pullIndex(t, c.secret); s != http.StatusUnauthorized {
		t.Errorf("the replaced secret pulls: %d, want 401", s)
	}
	if s := c.pullIndex(t, secret); s != http.StatusOK {
		t.Errorf("the new secret pulls: %d, want 200", s)
	}
	if p := owner.Get(t, page); strings.Contains(p.Body, secret) {
		t.Error("the robot page shows the secret again")
	}
	// With a grace period the replaced secret keeps working, and both
	// pages say until when.
	r = owner.PostForm(t, page+"/rotate", url.Values{"csrf_token": {csrf}, "grace": {"1h"}})
	if got, _ := textOf(t, r.Body, byID("old-secret")); r.StatusCode != http.StatusOK || !strings.HasPrefix(got, "works until") {
		t.Fatalf("rotate with grace: %d, old secret %q", r.StatusCode, got)
	}
	if s := c.pullIndex(t, secret); s != http.StatusOK {
		t.Errorf("the secret replaced with grace pulls: %d, want 200", s)
	}
	if p := owner.Get(t, page); !strings.Contains(p.Body, "<dt>Old secret</dt>") {
		t.Error("the robot page does not say until when the old secret works")
	}
	secret = valueOf(t, r.Body, "new-secret")

	if d := owner.Get(t, page+"/delete"); d.StatusCode != http.StatusOK || !strings.Contains(d.Body, `id="confirm-delete"`) {
		t.Fatalf("delete page: %d %s", d.StatusCode, d.Body)
	}
	// A made-up notice for a robot that exists is not shown.
	if o := owner.Get(t, "/organizations/acme?robot_deleted=ci-push"); strings.Contains(o.Body, "was deleted") {
		t.Error("the organization page confirms deleting a robot that exists")
	}
	r = owner.PostForm(t, page+"/delete", url.Values{"csrf_token": {csrf}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	o := owner.Get(t, r.Header.Get("Location"))
	if !strings.Contains(o.Body, "Robot account ci-push was deleted.") || strings.Contains(o.Body, `data-robot="ci-push"`) {
		t.Errorf("after delete the organization page:\n%s", o.Body)
	}
	if p := owner.Get(t, page); p.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted robot's page: %d", p.StatusCode)
	}
	if s := c.pullIndex(t, secret); s != http.StatusUnauthorized {
		t.Errorf("a deleted robot pulls: %d, want 401", s)
	}
}
