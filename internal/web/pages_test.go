package web_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
)

const richReadme = "# Nginx\n\nA **web server**. See [install](#install).\n\n| Option | Default |\n|:--|--:|\n| `replicaCount` | 1 |\n\n- [x] HTTP/2\n- [ ] HTTP/3\n\n```yaml\nreplicaCount: 2\n```\n\n![diagram](https://img.example.com/d.png)\n\n## Install\n\n<script>window.__pwned='script'</script>\n<img src=x onerror=\"window.__pwned='img'\">\n<svg onload=\"window.__pwned='svg'\"><script>window.__pwned='svg script'</script></svg>\n<details open ontoggle=\"window.__pwned='toggle'\"><summary>More</summary>text</details>\n\n[click](javascript:window.__pwned='link')\n"

const schemaJSON = `{"type":"object","properties":{"replicaCount":{"type":"integer","default":1,"description":"Pods to run"},"image":{"type":"object","properties":{"tag":{"type":"string","default":"stable"}}}}}`

// catalog is a server with an organization, a team, a public and a
// private repository and charts in them.
type catalog struct {
	*oauthtest.Env
	ownerKey string
}

const (
	ownerEmail  = "olivia@example.com"
	memberEmail = "maria@example.com"
	outsider    = "otto@example.com"
)

func setupCatalog(t *testing.T) *catalog {
	t.Helper()
	env := oauthtest.Start(t, oauthtest.Config{OCI: true})
	owner := env.MustUserWithPassword(t, ownerEmail, password, false)
	env.MustUserWithPassword(t, memberEmail, password, false)
	env.MustUserWithPassword(t, outsider, password, false)
	c := &catalog{Env: env, ownerKey: env.MustKey(t, owner, "repo:read", "repo:write", "team:read", "team:write", "org:read", "org:write")}
	c.must(t, http.MethodPost, "/v1/organizations", map[string]string{"name": "acme", "description": "Acme Corp"})
	c.must(t, http.MethodPost, "/v1/teams", map[string]string{"name": "platform", "organization": "acme", "description": "Platform team"})
	c.must(t, http.MethodPost, "/v1/teams/platform/members", map[string]string{"email": memberEmail, "role": "member"})
	c.must(t, http.MethodPost, "/v1/repositories", map[string]string{"name": "platform-charts", "description": "Charts for everyone", "visibility": "public", "organization": "acme"})
	c.must(t, http.MethodPost, "/v1/repositories", map[string]string{"name": "internal-charts", "description": "Only for Acme", "organization": "acme"})
	c.must(t, http.MethodPost, "/v1/repositories", map[string]string{"name": "empty-repo", "visibility": "public"})
	for _, v := range []string{"1.0.0", "1.1.0"} {
		c.upload(t, "platform-charts", testkit.Chart{Name: "nginx", Version: v, AppVersion: "1.25." + v[2:3], Description: "Fast web server", Keywords: []string{"web", "http"},
			Extra: "home: https://nginx.org\nsources:\n  - https://github.com/nginx/nginx\nmaintainers:\n  - name: Ada\n    email: ada@example.com\nkubeVersion: \">=1.25.0-0\"\n" +
				"dependencies:\n  - name: redis\n    version: 1.x\n    repository: " + env.URL + "/helm/platform-charts\n" +
				"annotations:\n  artifacthub.io/license: Apache-2.0\n  artifacthub.io/changes: |\n    - kind: added\n      description: HTTP/2 by default\n",
			Files: map[string]string{"README.md": richReadme, "values.schema.json": schemaJSON}})
	}
	c.upload(t, "platform-charts", testkit.Chart{Name: "redis", Version: "1.2.0", Description: "In-memory store"})
	c.upload(t, "internal-charts", testkit.Chart{Name: "billing", Version: "0.3.0", Description: "Secret billing service"})
	return c
}

func (c *catalog) must(t *testing.T, method, path string, body any) {
	t.Helper()
	if r := c.DoJSON(t, method, path, c.ownerKey, body); r.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, r.StatusCode, r.Body)
	}
}

func (c *catalog) upload(t testing.TB, repo string, ch testkit.Chart) {
	t.Helper()
	if r := c.Upload(t, repo, c.ownerKey, testkit.MakeChart(t, ch), ""); r.StatusCode != 200 {
		t.Fatalf("upload %s %s: %d %s", ch.Name, ch.Version, r.StatusCode, r.Body)
	}
}

func TestBrowseAnonymously(t *testing.T) {
	c := setupCatalog(t)
	b := c.NewBrowser(t)
	home := b.Get(t, "/")
	if home.StatusCode != 200 || !strings.Contains(home.Body, `action="/search"`) {
		t.Fatalf("home: %d %s", home.StatusCode, home.Body)
	}
	repos := b.Get(t, "/repositories")
	if repos.StatusCode != 200 || !strings.Contains(repos.Body, "platform-charts") || strings.Contains(repos.Body, "internal-charts") {
		t.Fatalf("repositories: %d %s", repos.StatusCode, repos.Body)
	}
	repo := b.Get(t, "/repositories/platform-charts")
	if repo.StatusCode != 200 || !strings.Contains(repo.Body, "helm repo add platform-charts "+c.URL+"/helm/platform-charts") || !strings.Contains(repo.Body, `href="/repositories/platform-charts/charts/nginx"`) {
		t.Fatalf("repository: %d %s", repo.StatusCode, repo.Body)
	}
	empty := b.Get(t, "/repositories/empty-repo")
	if !strings.Contains(empty.Body, "chartctl chart push") {
		t.Errorf("an empty repository does not say how to push: %s", empty.Body)
	}
	ch := b.Get(t, "/repositories/platform-charts/charts/nginx")
	for _, want := range []string{"1.1.0", "<table>", "helm install my-nginx oci://" + strings.TrimPrefix(c.URL, "http://") + "/platform-charts/nginx --version 1.1.0 --plain-http", `class="hl-`, "Apache-2.0", "HTTP/2 by default", `href="/repositories/platform-charts/charts/redis"`, "ada@example.com", "&gt;=1.25.0-0", "sha256:", `rel="canonical" href="` + c.URL + `/repositories/platform-charts/charts/nginx"`} {
		if !strings.Contains(ch.Body, want) {
			t.Errorf("chart page lacks %q", want)
		}
	}
	if strings.Contains(ch.Body, "__pwned='script'") || strings.Contains(ch.Body, "onerror") || strings.Contains(ch.Body, "ontoggle") || strings.Contains(ch.Body, `href="javascript:`) {
		t.Errorf("chart page carries hostile README content")
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|style="|<style`).MatchString(ch.Body) {
		t.Error("chart page has inline script or style")
	}
	old := b.Get(t, "/repositories/platform-charts/charts/nginx/1.0.0?tab=values")
	if old.StatusCode != 200 || !strings.Contains(old.Body, "latest is 1.1.0") || !strings.Contains(old.Body, "replicaCount") {
		t.Errorf("old version values: %d", old.StatusCode)
	}
	// Percent-encoded segments name the same page (encodeURIComponent of
	// "1.0.0+build.1" sends %2B; here every segment is escaped).
	if enc := b.Get(t, "/repositories/platform%2Dcharts/charts/nginx/1%2E0%2E0?tab=values"); enc.StatusCode != 200 || !strings.Contains(enc.Body, "replicaCount") {
		t.Errorf("chart page with percent-encoded segments: %d", enc.StatusCode)
	}
	schema := b.Get(t, "/repositories/platform-charts/charts/nginx?tab=schema")
	if !strings.Contains(schema.Body, "image.tag") || !strings.Contains(schema.Body, "Pods to run") {
		t.Errorf("schema tab: %s", schema.Body)
	}
	tpl := b.Get(t, "/repositories/platform-charts/charts/nginx?tab=templates")
	if !strings.Contains(tpl.Body, "templates/deployment.yaml") {
		t.Errorf("templates tab")
	}
	dl := b.Get(t, "/repositories/platform-charts/charts/nginx/1.1.0/download")
	if dl.StatusCode != 200 || !strings.Contains(dl.Header.Get("Content-Disposition"), "nginx-1.1.0.tgz") {
		t.Errorf("download: %d %v", dl.StatusCode, dl.Header)
	}
	search := b.Get(t, "/search?q=web")
	if !strings.Contains(search.Body, "nginx") || strings.Contains(search.Body, "billing") {
		t.Errorf("search: %s", search.Body)
	}
	frag := b.Get(t, "/search?q=ngi&fragment=1")
	if strings.Contains(frag.Body, "<html") || !strings.Contains(frag.Body, "nginx") {
		t.Errorf("search fragment: %s", frag.Body)
	}
	// A search that finds nothing offers to sign in and come back to it,
	// typed or as you type.
	for _, path := range []string{"/search?q=billing", "/search?q=billing&fragment=1"} {
		if p := b.Get(t, path); !strings.Contains(p.Body, `href="/signin?return_to=%2Fsearch%3Fq%3Dbilling"`) {
			t.Errorf("%s: no sign-in link back to the search: %s", path, p.Body)
		}
	}
	for _, path := range []string{"/repositories/internal-charts", "/repositories/internal-charts/charts/billing", "/repositories/internal-charts/charts/billing/0.3.0/download",
		"/repositories/nope", "/repositories/platform-charts/charts/nope", "/repositories/platform-charts/charts/nginx/9.9.9", "/organizations/acme", "/teams/platform"} {
		if p := b.Get(t, path); p.StatusCode != http.StatusNotFound {
			t.Errorf("anonymous GET %s: %d, want 404", path, p.StatusCode)
		}
	}
}

func TestSignedInSeesOrganizationRepositories(t *testing.T) {
	c := setupCatalog(t)
	member := c.NewBrowser(t)
	member.SignIn(t, memberEmail, password)
	if p := member.Get(t, "/repositories/internal-charts/charts/billing"); p.StatusCode != 200 || !strings.Contains(p.Body, "Secret billing service") {
		t.Fatalf("member: private chart %d", p.StatusCode)
	}
	if p := member.Get(t, "/search?q=billing"); !strings.Contains(p.Body, "/repositories/internal-charts/charts/billing") {
		t.Errorf("member search misses the private chart")
	}
	if p := member.Get(t, "/teams/platform"); p.StatusCode != 200 || strings.Contains(p.Body, "add-member") {
		t.Errorf("member: team page %d (no forms for a member)", p.StatusCode)
	}
	if p := member.Get(t, "/repositories/internal-charts/settings"); p.StatusCode != http.StatusForbidden {
		t.Errorf("member: settings %d, want 403", p.StatusCode)
	}
	out := c.NewBrowser(t)
	out.SignIn(t, outsider, password)
	for _, path := range []string{"/repositories/internal-charts/charts/billing", "/teams/platform", "/organizations/acme"} {
		if p := out.Get(t, path); p.StatusCode != http.StatusNotFound {
			t.Errorf("outsider %s: %d, want 404", path, p.StatusCode)
		}
	}
}

func TestOwnerManagesTeamAndRepository(t *testing.T) {
	c := setupCatalog(t)
	b := c.NewBrowser(t)
	b.SignIn(t, ownerEmail, password)
	team := b.Get(t, "/teams/platform")
	csrf := team.CSRF(t)
	if r := b.PostForm(t, "/teams/platform/members", url.Values{"csrf_token": {"wrong"}, "email": {"new@example.com"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("add without CSRF: %d", r.StatusCode)
	}
	if r := b.PostForm(t, "/teams/platform/members", url.Values{"csrf_token": {csrf}, "email": {"not an email"}, "role": {"member"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("bad email: %d", r.StatusCode)
	}
	if r := b.PostForm(t, "/teams/platform/members", url.Values{"csrf_token": {csrf}, "email": {outsider}, "role": {"maintainer"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("add: %d %s", r.StatusCode, r.Body)
	}
	// The API sees the change at once.
	var members struct {
		Data []struct{ Email, Role, ID string }
	}
	c.Do(t, http.MethodGet, "/v1/teams/platform/members", c.ownerKey, nil).JSON(t, &members)
	id := ""
	for _, m := range members.Data {
		if m.Email == outsider {
			id = m.ID
			if m.Role != "maintainer" {
				t.Errorf("role %q", m.Role)
			}
		}
	}
	if r := b.PostForm(t, "/teams/platform/members/"+id+"/role", url.Values{"csrf_token": {csrf}, "role": {"owner"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("change role: %d", r.StatusCode)
	}
	if r := b.PostForm(t, "/teams/platform/members/"+id+"/remove", url.Values{"csrf_token": {csrf}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d", r.StatusCode)
	}
	// A member may not manage the team.
	m := c.NewBrowser(t)
	m.SignIn(t, memberEmail, password)
	mcsrf := m.Get(t, "/teams/platform").CSRF(t)
	if r := m.PostForm(t, "/teams/platform/members", url.Values{"csrf_token": {mcsrf}, "email": {"x@example.com"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("member adds: %d, want 403", r.StatusCode)
	}

	// Repository settings: description, visibility, delete by name.
	settings := b.Get(t, "/repositories/internal-charts/settings")
	if settings.StatusCode != 200 {
		t.Fatalf("settings: %d", settings.StatusCode)
	}
	if r := b.PostForm(t, "/repositories/internal-charts/settings", url.Values{"csrf_token": {csrf}, "description": {"Now public"}, "visibility": {"public"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save settings: %d %s", r.StatusCode, r.Body)
	}
	if p := c.NewBrowser(t).Get(t, "/repositories/internal-charts"); p.StatusCode != 200 || !strings.Contains(p.Body, "Now public") {
		t.Errorf("after making it public, anonymous: %d", p.StatusCode)
	}
	if r := b.PostForm(t, "/repositories/internal-charts/delete", url.Values{"csrf_token": {csrf}, "confirm": {"internal"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("delete with the wrong name: %d", r.StatusCode)
	}
	if r := b.PostForm(t, "/repositories/internal-charts/delete", url.Values{"csrf_token": {csrf}, "confirm": {"internal-charts"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if r := c.Do(t, http.MethodGet, "/v1/repositories/internal-charts", c.ownerKey, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("deleted repository: %d", r.StatusCode)
	}
}

// TestPageRenderedOnUploadForgottenOnDelete checks the write path's hook:
// a version's page is rendered when it is stored (in the background after
// the upload's answer, before any view) and dropped with its archive's
// blob.
func TestPageRenderedOnUploadForgottenOnDelete(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustRepo(t, "charts", "public")
	r := env.Upload(t, "charts", env.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "demo", Version: "1.0.0", Files: map[string]string{"README.md": "# Demo\n"}}), "")
	var up struct{ Data struct{ Digest string } }
	r.JSON(t, &up)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := env.Store.ChartPage(t.Context(), up.Data.Digest)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page rendered 30 s after the upload: %v", err)
		}
	}
	if r := env.Do(t, http.MethodDelete, "/v1/repositories/charts/charts/demo/1.0.0", env.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d", r.StatusCode)
	}
	// The archive's blob goes once past the grace period, its page with it.
	if !env.App().DeleteOrphan(t.Context(), up.Data.Digest, time.Now().Add(env.App().BlobGrace()+time.Minute)) {
		t.Fatal("the deleted version's archive was not collected past the grace period")
	}
	if _, err := env.Store.ChartPage(t.Context(), up.Data.Digest); err == nil {
		t.Error("the page of a deleted archive is still recorded")
	}
}

// TestPagesAnswerHEAD checks that every page a visitor can open by address
// answers HEAD as it answers GET, without a body (RFC 9110 §9.3.2): uptime
// monitors and link checkers ask with HEAD and must not see a 405.
func TestPagesAnswerHEAD(t *testing.T) {
	c := setupCatalog(t)
	b := c.NewBrowser(t)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/", 200}, {"/search?q=nginx", 200}, {"/signin", 200}, {"/repositories", 200},
		{"/repositories/platform-charts", 200}, {"/repositories/platform-charts/charts/nginx", 200},
		{"/repositories/platform-charts/charts/nginx/1.0.0", 200}, {"/static/style.css", 200}, {"/static/highlight.css", 200},
		{"/repositories/internal-charts", 404}, {"/settings/api-keys", 303},
	} {
		get := b.Get(t, tc.path)
		resp, err := b.Head(c.URL + tc.path)
		if err != nil {
			t.Fatalf("HEAD %s: %v", tc.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || get.StatusCode != tc.status {
			t.Errorf("%s: HEAD %d, GET %d, want %d", tc.path, resp.StatusCode, get.StatusCode, tc.status)
		}
		if len(body) != 0 || resp.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("%s: HEAD answered %d body bytes, Content-Type %q (GET %q)", tc.path, len(body), resp.Header.Get("Content-Type"), get.Header.Get("Content-Type"))
		}
	}
}

// TestTeamNoticeCannotBeForged: the notice after a member change comes
// from the redirect's query string. A link anyone can craft must not put
// its own words in the team page's success notice, nor claim a change that
// did not happen; the notices of real changes still show.
func TestTeamNoticeCannotBeForged(t *testing.T) {
	c := setupCatalog(t)
	b := c.NewBrowser(t)
	b.SignIn(t, memberEmail, password)
	for _, q := range []url.Values{
		{"done": {"removed"}, "email": {"Security notice: your session expired. Sign in again at https://evil.example/login"}},
		{"done": {"added"}, "email": {"attacker@evil.example"}},
		{"done": {"removed"}, "email": {memberEmail}},
		{"done": {"role"}, "email": {"nobody@example.com"}},
	} {
		p := b.Get(t, "/teams/platform?"+q.Encode())
		if p.StatusCode != http.StatusOK || strings.Contains(p.Body, "alert-success") {
			t.Errorf("/teams/platform?%s: %d, a notice is shown:\n%s", q.Encode(), p.StatusCode, p.Body)
		}
	}
	for q, want := range map[string]string{
		"done=added&email=" + url.QueryEscape(memberEmail):   memberEmail + " was added to the team.",
		"done=role&email=" + url.QueryEscape(memberEmail):    "The role of " + memberEmail + " was changed.",
		"done=removed&email=" + url.QueryEscape("gone@x.io"): "gone@x.io was removed from the team.",
	} {
		if p := b.Get(t, "/teams/platform?"+q); !strings.Contains(p.Body, want) {
			t.Errorf("/teams/platform?%s does not say %q", q, want)
		}
	}
}

// TestDependencyLinks: a dependency on a chart of this server links to the
// version it pins when that version is stored, to the chart when it names
// a range, and not at all when the chart is not there (a link would lead
// to the 404 page).
func TestDependencyLinks(t *testing.T) {
	c := setupCatalog(t)
	deps := "dependencies:\n" +
		"  - name: nginx\n    version: 1.0.0\n    repository: " + c.URL + "/helm/platform-charts\n" +
		"  - name: redis\n    version: ~1.2.0\n    repository: " + c.URL + "/helm/platform-charts\n" +
		"  - name: postgres\n    version: 9.0.0\n    repository: " + c.URL + "/helm/platform-charts\n"
	c.upload(t, "platform-charts", testkit.Chart{Name: "stack", Version: "0.1.0", Extra: deps})
	p := c.NewBrowser(t).Get(t, "/repositories/platform-charts/charts/stack")
	for _, want := range []string{`<a href="/repositories/platform-charts/charts/nginx/1.0.0">nginx</a>`, `<a href="/repositories/platform-charts/charts/redis">redis</a>`, `<li>postgres <span`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the dependencies do not show %s:\n%s", want, p.Body)
		}
	}
}

// TestUnknownAddressIsThe404Page: a browser that asks for an address no
// page has (a trailing slash, a URL cut short, a typo) gets the 404 page,
// as for an unknown repository, not the API's JSON error; API clients and
// other methods keep the API's answers.
func TestUnknownAddressIsThe404Page(t *testing.T) {
	c := setupCatalog(t)
	const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, path := range []string{"/repositories/platform-charts/", "/repositories/platform-charts/charts", "/teams", "/no/such/page"} {
		p := c.Do(t, http.MethodGet, path, "", nil, "Accept", browserAccept)
		if p.StatusCode != http.StatusNotFound || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(p.Body), "Page not found") ||
			p.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("browser GET %s: %d %s %q", path, p.StatusCode, p.Header.Get("Content-Type"), p.Body)
		}
	}
	for _, tc := range []struct {
		method, path, accept string
		status               int
		code                 string
	}{
		{http.MethodGet, "/no/such/page", "application/json", 404, "not_found"},
		{http.MethodGet, "/no/such/page", "*/*", 404, "not_found"},
		{http.MethodGet, "/v1/nope", browserAccept, 404, "not_found"},
		{http.MethodGet, "/helm/nope/x/y", browserAccept, 404, "not_found"},
		{http.MethodDelete, "/repositories/platform-charts", browserAccept, 405, "method_not_allowed"},
		{http.MethodPost, "/no/such/page", browserAccept, 404, "not_found"},
	} {
		p := c.Do(t, tc.method, tc.path, "", nil, "Accept", tc.accept)
		if p.StatusCode != tc.status || !strings.Contains(string(p.Body), `"code":"`+tc.code+`"`) {
			t.Errorf("%s %s (Accept %s): %d %s, want %d %s", tc.method, tc.path, tc.accept, p.StatusCode, p.Body, tc.status, tc.code)
		}
	}
}
