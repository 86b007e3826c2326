package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axeScript returns axe-core's browser bundle: $CHARTCTL_AXE, or the copy
// .ci/run installs under .tools. It skips the test when there is none,
// unless CHARTCTL_REQUIRE_E2E=1.
func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHARTCTL_AXE")
	if path == "" {
		path = filepath.Join("..", "..", ".tools", "axe-core-4.10.3", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
			t.Fatalf("axe-core not found at %s (set CHARTCTL_AXE): %v", path, err)
		}
		t.Skipf("axe-core not found at %s; set CHARTCTL_AXE to run the accessibility checks", path)
	}
	return string(b)
}

// screenshotDir is where page screenshots go: $CHARTCTL_SCREENSHOTS, or a
// directory that outlives the test, logged for a person to look at.
func screenshotDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("CHARTCTL_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d, err := os.MkdirTemp("", "chartctl-screenshots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", d)
	return d
}

// colorScheme emulates prefers-color-scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tgt, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// axeViolation is a violation axe-core reports.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkA11y runs axe-core in the page and fails on serious or critical
// violations.
func checkA11y(t *testing.T, ctx context.Context, axe, what string) {
	t.Helper()
	run(t, ctx, "inject axe", chromedp.Evaluate[chromedp.Void](axe))
	const script = `axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))))`
	out := get(t, ctx, "run axe", chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("axe result %q: %v", out, err)
	}
	for _, v := range vs {
		t.Errorf("%s: accessibility (%s) %s: %s at %v", what, v.Impact, v.ID, v.Help, v.Nodes)
	}
}

// status navigates to url and returns the response status.
func status(t *testing.T, ctx context.Context, url string) int64 {
	t.Helper()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
	return resp.Status
}

func signInAs(t *testing.T, ctx context.Context, base, email, returnTo string) {
	t.Helper()
	run(t, ctx, "sign in as "+email,
		chromedp.Navigate(base+"/signin?return_to="+returnTo),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.account button[type=submit]`)),
	)
}

func TestBrowserAnonymousBrowseToChart(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	run(t, ctx, "home to chart",
		chromedp.Navigate(c.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.Click(chromedp.CSS(`.mainnav a[href="/repositories"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/repositories/platform-charts"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/repositories/platform-charts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a.chart-name[href="/repositories/platform-charts/charts/nginx"]`)),
		chromedp.Click(chromedp.CSS(`a.chart-name[href="/repositories/platform-charts/charts/nginx"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#readme h1`)),
	)
	if h := get(t, ctx, "README heading", chromedp.Text(chromedp.CSS(`#readme h1`))); h != "Nginx" {
		t.Errorf("README heading %q", h)
	}
	// The hostile parts of the README did nothing: no handler ran, nothing
	// was loaded, nothing that runs script is in the page.
	pwned := get(t, ctx, "hostile README", chromedp.Evaluate[string](`JSON.stringify({
		ran: window.__pwned || "nothing",
		active: document.querySelectorAll("#readme script, #readme img, #readme svg, #readme iframe, #readme [onerror], #readme [onload], #readme [ontoggle], #readme a[href^='javascript']").length,
		title: document.title})`))
	if !strings.Contains(pwned, `"ran":"nothing"`) || !strings.Contains(pwned, `"active":0`) || !strings.Contains(pwned, `nginx · platform-charts · chartctl`) {
		t.Errorf("page state %s", pwned)
	}
	install := get(t, ctx, "install line", chromedp.Text(chromedp.CSS(`#line-install`)))
	if install != "helm install my-nginx platform-charts/nginx --version 1.1.0" {
		t.Errorf("install line %q", install)
	}
	run(t, ctx, "copy", chromedp.Click(chromedp.CSS(`button[data-copy="line-install"]`)), chromedp.WaitVisible(chromedp.CSS(`#copy-status:not(:empty)`)))
}

func TestBrowserSignInThenPrivateRepository(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	if s := status(t, ctx, c.URL+"/repositories/internal-charts"); s != http.StatusNotFound {
		t.Fatalf("anonymous private repository: %d", s)
	}
	signInAs(t, ctx, c.URL, memberEmail, "%2Frepositories%2Finternal-charts")
	run(t, ctx, "private repository", chromedp.WaitVisible(chromedp.CSS(`a.chart-name[href="/repositories/internal-charts/charts/billing"]`)))
	if line := get(t, ctx, "repo add line", chromedp.Text(chromedp.CSS(`#line-repo-add`))); !strings.Contains(line, `--password "$KEY"`) {
		t.Errorf("a private repository's repo add line %q", line)
	}
}

func TestBrowserOwnerAddsMemberAndChangesRole(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	signInAs(t, ctx, c.URL, ownerEmail, "%2Fteams%2Fplatform")
	run(t, ctx, "add member",
		chromedp.WaitVisible(chromedp.CSS(`#member-email`)),
		chromedp.SendKeys(chromedp.CSS(`#member-email`), "newcomer@example.com"),
		chromedp.SetValue(chromedp.CSS(`#member-role`), "maintainer"),
		chromedp.Click(chromedp.CSS(`#add-member`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-member="newcomer@example.com"]`)),
	)
	if flash := get(t, ctx, "notice", chromedp.Text(chromedp.CSS(`.alert-success`))); !strings.Contains(flash, "newcomer@example.com was added") {
		t.Errorf("notice %q", flash)
	}
	run(t, ctx, "change role",
		chromedp.SetValue(chromedp.CSS(`tr[data-member="newcomer@example.com"] select`), "owner"),
		chromedp.Click(chromedp.CSS(`tr[data-member="newcomer@example.com"] form[action$="/role"] button`)),
		// The page the server answers with marks the stored role selected.
		chromedp.WaitReady(chromedp.CSS(`tr[data-member="newcomer@example.com"] option[value="owner"][selected]`)),
	)
	var members struct {
		Data []struct{ Email, Role string }
	}
	c.Do(t, http.MethodGet, "/v1/teams/platform/members", c.ownerKey, nil).JSON(t, &members)
	found := false
	for _, m := range members.Data {
		if m.Email == "newcomer@example.com" {
			found = m.Role == "owner"
		}
	}
	if !found {
		t.Errorf("after the forms the API lists %+v", members.Data)
	}
}

func TestBrowserSearchFindsChart(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	// As you type: the results appear without submitting.
	run(t, ctx, "search as you type",
		chromedp.Navigate(c.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), "redi"),
		chromedp.WaitVisible(chromedp.CSS(`#search-results a[href="/repositories/platform-charts/charts/redis"]`)),
	)
	// And as a plain form.
	run(t, ctx, "search form",
		chromedp.Navigate(c.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), "web\r"),
		chromedp.WaitVisible(chromedp.CSS(`#result-count`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-results a[href="/repositories/platform-charts/charts/nginx"]`)),
	)
}

func TestBrowserOutsiderGets404(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	signInAs(t, ctx, c.URL, outsider, "%2F")
	for _, path := range []string{"/repositories/internal-charts/charts/billing", "/repositories/internal-charts/charts/billing/0.3.0", "/teams/platform"} {
		if s := status(t, ctx, c.URL+path); s != http.StatusNotFound {
			t.Errorf("outsider %s: %d, want 404", path, s)
		}
	}
	if h := get(t, ctx, "404 heading", chromedp.Text(chromedp.CSS(`h1`))); h != "Page not found" {
		t.Errorf("404 page heading %q", h)
	}
}

// TestBrowserPagesAccessibleAndScreenshots visits every page type as the
// organization's owner, light and dark, at desktop and phone widths: axe
// finds no serious or critical problem, and a screenshot of each is kept.
func TestBrowserPagesAccessibleAndScreenshots(t *testing.T) {
	axe := axeScript(t)
	c := setupCatalog(t)
	dir := screenshotDir(t)
	ctx := newBrowser(t)
	// A webhook of each scope with a delivery, for the webhook pages.
	var hook struct{ Data struct{ ID string } }
	if r := c.DoJSON(t, http.MethodPost, "/v1/organizations/acme/webhooks", c.ownerKey, map[string]any{"url": "https://ci.example.com/hooks/chartctl", "events": []string{"chart.pushed"}}); r.StatusCode != 200 {
		t.Fatalf("webhook: %d %s", r.StatusCode, r.Body)
	} else {
		r.JSON(t, &hook)
	}
	c.must(t, http.MethodPost, "/v1/webhooks/"+hook.Data.ID+"/ping", nil)
	c.must(t, http.MethodPost, "/v1/repositories/platform-charts/webhooks", map[string]any{"url": "https://ci.example.com/hooks/platform", "events": []string{"*"}})
	c.MustUserWithPassword(t, "root@example.com", password, true)
	anonymous := []struct{ name, path string }{
		{"home", "/"},
		{"signin", "/signin"},
		{"notfound", "/repositories/nope"},
	}
	pages := []struct{ name, path string }{
		{"search", "/search?q=e"},
		{"repositories", "/repositories"},
		{"repository", "/repositories/platform-charts"},
		{"repository-empty", "/repositories/empty-repo"},
		{"chart-readme", "/repositories/platform-charts/charts/nginx"},
		{"chart-values", "/repositories/platform-charts/charts/nginx?tab=values"},
		{"chart-schema", "/repositories/platform-charts/charts/nginx?tab=schema"},
		{"chart-templates", "/repositories/platform-charts/charts/nginx/1.0.0?tab=templates"},
		{"organization", "/organizations/acme"},
		{"team", "/teams/platform"},
		{"repository-settings", "/repositories/platform-charts/settings"},
		{"repository-webhooks", "/repositories/platform-charts/webhooks"},
		{"organization-webhooks", "/organizations/acme/webhooks"},
		{"webhook", "/webhooks/" + hook.Data.ID},
		{"webhook-delete", "/webhooks/" + hook.Data.ID + "/delete"},
	}
	visit := func(name, path string) {
		for _, scheme := range []string{"light", "dark"} {
			for _, size := range []struct {
				name string
				w, h int64
			}{{"desktop", 1280, 860}, {"phone", 390, 844}} {
				shot := fmt.Sprintf("%s-%s-%s", name, size.name, scheme)
				run(t, ctx, shot,
					chromedp.EmulateViewport(size.w, size.h),
					colorScheme(scheme),
					chromedp.Navigate(c.URL+path),
					chromedp.WaitReady(chromedp.CSS(`main`)),
				)
				buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatalf("%s: screenshot: %v", shot, err)
				}
				if err := os.WriteFile(filepath.Join(dir, shot+".png"), buf, 0o644); err != nil {
					t.Fatal(err)
				}
				checkA11y(t, ctx, axe, shot)
			}
		}
	}
	for _, p := range anonymous {
		visit(p.name, p.path)
	}
	signInAs(t, ctx, c.URL, ownerEmail, "%2F")
	for _, p := range pages {
		visit(p.name, p.path)
	}
	// The server-wide webhooks, as an admin.
	ctx = newBrowser(t)
	signInAs(t, ctx, c.URL, "root@example.com", "%2F")
	visit("server-webhooks", "/admin/webhooks")
}

// TestBrowserSignInFromPageReturnsToIt follows a link to a private chart
// as an anonymous visitor: the 404 page asks to sign in and offers it, and
// signing in lands on the chart, not on the home page. The top bar's Sign
// in on a public page comes back to that page too.
func TestBrowserSignInFromPageReturnsToIt(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	const private = "/repositories/internal-charts/charts/billing?tab=values"
	if s := status(t, ctx, c.URL+private); s != http.StatusNotFound {
		t.Fatalf("anonymous private chart: %d", s)
	}
	signInThrough := func(step string) {
		t.Helper()
		run(t, ctx, step,
			chromedp.Click(chromedp.CSS(`#signin-link`)),
			chromedp.WaitVisible(chromedp.CSS(`#email`)),
			chromedp.SendKeys(chromedp.CSS(`#email`), memberEmail),
			chromedp.SendKeys(chromedp.CSS(`#password`), password),
			chromedp.Click(chromedp.CSS(`button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.account button[type=submit]`)),
		)
	}
	signInThrough("sign in from the 404 page")
	if loc := get(t, ctx, "location", chromedp.Location()); loc != c.URL+private {
		t.Errorf("after signing in from the 404 page the browser is at %s, want %s", loc, c.URL+private)
	}
	run(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`.account button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#email`)))
	const public = "/repositories/platform-charts/charts/nginx/1.0.0"
	run(t, ctx, "public chart", chromedp.Navigate(c.URL+public), chromedp.WaitVisible(chromedp.CSS(`#signin-link`)))
	signInThrough("sign in from the top bar")
	if loc := get(t, ctx, "location", chromedp.Location()); loc != c.URL+public {
		t.Errorf("after signing in from the top bar the browser is at %s, want %s", loc, c.URL+public)
	}
}

// TestBrowserClearedSearchLeavesNoTrace types a search on the home page,
// then clears it: the results go, and so does the search from the address
// bar and the title, so a reload or a bookmark does not bring it back.
func TestBrowserClearedSearchLeavesNoTrace(t *testing.T) {
	c := setupCatalog(t)
	ctx := newBrowser(t)
	run(t, ctx, "type a search",
		chromedp.Navigate(c.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), "redi"),
		chromedp.WaitVisible(chromedp.CSS(`#search-results`)),
	)
	if loc := get(t, ctx, "location", chromedp.Location()); loc != c.URL+"/search?q=redi" {
		t.Errorf("while searching the address is %s", loc)
	}
	run(t, ctx, "clear it",
		chromedp.SendKeys(chromedp.CSS(`#q`), "\b\b\b\b"),
		chromedp.WaitNotPresent(chromedp.CSS(`#search-results`)),
	)
	if loc := get(t, ctx, "location", chromedp.Location()); loc != c.URL+"/" {
		t.Errorf("after clearing the search the address is %s, want %s/", loc, c.URL)
	}
	if title := get(t, ctx, "title", chromedp.Title()); title != "Find Helm charts · chartctl" {
		t.Errorf("after clearing the search the title is %q", title)
	}
}
