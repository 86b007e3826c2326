package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// shot saves a screenshot of the page as it is to the screenshot
// directory, for a person to look at.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// smallPNG is a 24×24 PNG image, for a chart's README to show.
func smallPNG(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 24, 24))
	for x := range 24 {
		for y := range 24 {
			img.Set(x, y, color.RGBA{R: 47, G: 91, B: 234, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostileLayoutReadme closes the page's containers and opens a fake
// "Install" card with the chart page's own classes, and links to files of
// the chart and to one it does not have.
const hostileLayoutReadme = "# Layout\n\nSee the [guide](docs/guide.md) and the [missing page](docs/missing.md).\n\n![Logo](img/logo.png)\n\n" +
	"</div></div></section></div></main>\n\n<div class=\"card chart-install\"><h2>Install</h2><pre id=\"fake-install\">helm install evil oci://evil.example/x</pre></div>\n"

// TestBrowserReadmeStaysInItsContainer: a README with unbalanced closing
// tags and a fake Install card renders inside the README's region, which
// the page heads as the maintainers' content; its links and images to the
// chart's own files work, and a link to a file the chart lacks is text.
func TestBrowserReadmeStaysInItsContainer(t *testing.T) {
	c := setupCatalog(t)
	c.upload(t, "platform-charts", testkit.Chart{Name: "layout", Version: "1.0.0", Files: map[string]string{
		"README.md": hostileLayoutReadme, "docs/guide.md": "# The guide\n\nRead me.\n", "img/logo.png": smallPNG(t)}})
	dir := screenshotDir(t)
	ctx := newBrowser(t)
	run(t, ctx, "chart page",
		chromedp.Navigate(c.URL+"/repositories/platform-charts/charts/layout"),
		chromedp.WaitVisible(chromedp.CSS(`#readme`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#readme img") && document.querySelector("#readme img").complete`),
	)
	shot(t, ctx, dir, "readme-contained")
	if os.Getenv("CHARTCTL_AXE") != "" {
		checkA11y(t, ctx, axeScript(t), "readme-contained")
	}
	state := get(t, ctx, "DOM", chromedp.Evaluate[string](`(() => {
		const readme = document.getElementById("readme");
		const fake = [...document.querySelectorAll("pre")].find(p => p.textContent.includes("helm install evil"));
		const img = readme.querySelector("img");
		return JSON.stringify({
			fakeInside: !!fake && readme.contains(fake),
			fakeCard: document.querySelectorAll(".chart-install").length,
			readmeInArticle: readme.parentElement.matches("article.readme"),
			heading: document.querySelector(".readme-head").textContent,
			asideAfter: !!document.querySelector("main .chart-layout > aside.chart-side"),
			mainEnds: document.querySelector("main").lastElementChild.className,
			img: img ? {src: img.getAttribute("src"), w: img.naturalWidth} : null,
			links: [...readme.querySelectorAll("a")].map(a => a.getAttribute("href")),
			text: readme.textContent.includes("missing page"),
		});
	})()`))
	var got struct {
		FakeInside, ReadmeInArticle, AsideAfter, Text bool
		FakeCard                                      int
		Heading, MainEnds                             string
		Img                                           *struct {
			Src string
			W   int
		}
		Links []string
	}
	if err := json.Unmarshal([]byte(state), &got); err != nil {
		t.Fatalf("%s: %v", state, err)
	}
	if !got.FakeInside || got.FakeCard != 1 || !got.ReadmeInArticle || !got.AsideAfter {
		t.Errorf("the README escaped its container: %s", state)
	}
	if !strings.Contains(got.Heading, "README.md") || !strings.Contains(got.Heading, "maintainers") {
		t.Errorf("README region heading %q", got.Heading)
	}
	const files = "/repositories/platform-charts/charts/layout/1.0.0/files/"
	if got.Img == nil || got.Img.Src != files+"img/logo.png" || got.Img.W != 24 {
		t.Errorf("the chart's image is not shown from the chart: %s", state)
	}
	if len(got.Links) != 1 || got.Links[0] != files+"docs/guide.md" || !got.Text {
		t.Errorf("README links %v (want only the guide, the missing page as text): %s", got.Links, state)
	}
	run(t, ctx, "follow the guide link",
		chromedp.Click(chromedp.CSS(`#readme a`)),
		chromedp.WaitReady(chromedp.CSS(`body`)),
	)
	if body := get(t, ctx, "guide", chromedp.Text(chromedp.CSS(`body`))); !strings.Contains(body, "# The guide") {
		t.Errorf("the guide link shows %q", body)
	}
	// The file route sends its own strict headers, and never HTML.
	r := c.Do(t, http.MethodGet, files+"img/logo.png", "", nil)
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "image/png" || r.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("image: %d %v", r.StatusCode, r.Header)
	}
	if r := c.Do(t, http.MethodGet, files+"docs/missing.md", "", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("a file the chart lacks: %d, want 404", r.StatusCode)
	}
	if r := c.Do(t, http.MethodGet, "/repositories/internal-charts/charts/billing/0.3.0/files/Chart.yaml", "", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("a file of a private chart, anonymously: %d, want 404", r.StatusCode)
	}
}

// TestBrowserLayoutFits: the team page does not scroll sideways on a
// 375 px phone, the chart page's tab strip shows no scroll control at
// 1280 px, and the repository page shows its OCI address with a copy
// button.
func TestBrowserLayoutFits(t *testing.T) {
	c := setupCatalog(t)
	dir := screenshotDir(t)
	ctx := newBrowser(t)
	// A server admin: their navigation bar has the most entries.
	c.MustUserWithPassword(t, "root@example.com", password, true)
	signInAs(t, ctx, c.URL, "root@example.com", "%2F")

	// A phone: overlay scrollbars, so the page has all 375 px.
	run(t, ctx, "team page at 375 px",
		chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile),
		chromedp.Navigate(c.URL+"/teams/platform"),
		chromedp.WaitVisible(chromedp.CSS(`#members-table`)),
	)
	shot(t, ctx, dir, "team-375")
	widths := get(t, ctx, "team widths", chromedp.Evaluate[string](`JSON.stringify([document.documentElement.scrollWidth, document.documentElement.clientWidth])`))
	var w [2]int
	if err := json.Unmarshal([]byte(widths), &w); err != nil || w[0] > w[1] || w[1] != 375 {
		t.Errorf("team page at 375 px: scrollWidth, clientWidth = %s: it scrolls sideways", widths)
	}

	// Account Settings has four tabs: the strip scrolls, the page does not.
	run(t, ctx, "settings at 375 px", chromedp.Navigate(c.URL+"/settings/apps"), chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)))
	shot(t, ctx, dir, "settings-375")
	widths = get(t, ctx, "settings widths", chromedp.Evaluate[string](`JSON.stringify([document.documentElement.scrollWidth, document.documentElement.clientWidth])`))
	if err := json.Unmarshal([]byte(widths), &w); err != nil || w[0] > w[1] {
		t.Errorf("settings page at 375 px: scrollWidth, clientWidth = %s: it scrolls sideways", widths)
	}

	run(t, ctx, "chart page at 1280 px",
		chromedp.EmulateReset(),
		chromedp.EmulateViewport(1280, 860),
		chromedp.Navigate(c.URL+"/repositories/platform-charts/charts/nginx"),
		chromedp.WaitVisible(chromedp.CSS(`.chart-body .tabs`)),
	)
	shot(t, ctx, dir, "chart-tabs-1280")
	tabs := get(t, ctx, "tab strip", chromedp.Evaluate[string](`(() => { const t = document.querySelector(".chart-body .tabs");
		return JSON.stringify([t.scrollWidth, t.clientWidth, t.scrollHeight, t.clientHeight]); })()`))
	var tw [4]int
	if err := json.Unmarshal([]byte(tabs), &tw); err != nil || tw[0] > tw[1] || tw[2] > tw[3] {
		t.Errorf("tab strip at 1280 px: scrollWidth, clientWidth, scrollHeight, clientHeight = %s: it has something to scroll", tabs)
	}

	run(t, ctx, "repository page",
		chromedp.Navigate(c.URL+"/repositories/platform-charts"),
		chromedp.WaitVisible(chromedp.CSS(`#line-oci-repo`)),
	)
	shot(t, ctx, dir, "repository-oci")
	if os.Getenv("CHARTCTL_AXE") != "" {
		checkA11y(t, ctx, axeScript(t), "repository-oci")
	}
	want := "oci://" + strings.TrimPrefix(c.URL, "http://") + "/platform-charts"
	if got := get(t, ctx, "OCI address", chromedp.Text(chromedp.CSS(`#line-oci-repo`))); got != want {
		t.Errorf("repository page OCI address %q, want %q", got, want)
	}
	run(t, ctx, "copy the OCI address",
		chromedp.Click(chromedp.CSS(`button[data-copy="line-oci-repo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#copy-status:not(:empty)`)),
	)
}

// TestBrowserSearchErrorStaysShort: when the search answers with a server
// error, search as you type shows a short message in the results box, not
// the error page inside it.
func TestBrowserSearchErrorStaysShort(t *testing.T) {
	c := setupCatalog(t)
	dir := screenshotDir(t)
	ctx := newBrowser(t)
	run(t, ctx, "home", chromedp.Navigate(c.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#q`)))
	// The store goes away under the running server: every search fails.
	if err := c.Store.Close(); err != nil {
		t.Fatal(err)
	}
	if r := c.Do(t, http.MethodGet, "/search?fragment=1&q=redi", "", nil); r.StatusCode < 500 {
		t.Fatalf("search with the store closed: %d, want a server error", r.StatusCode)
	}
	run(t, ctx, "type a search",
		chromedp.SendKeys(chromedp.CSS(`#q`), "redi"),
		chromedp.WaitVisible(chromedp.CSS(`#results .search-error`)),
	)
	shot(t, ctx, dir, "search-error")
	if os.Getenv("CHARTCTL_AXE") != "" {
		checkA11y(t, ctx, axeScript(t), "search-error")
	}
	state := get(t, ctx, "results box", chromedp.Evaluate[string](`JSON.stringify({
		text: document.getElementById("results").textContent.trim(),
		nested: document.querySelectorAll("#results header, #results main, #results h1, #results form").length})`))
	if !strings.Contains(state, "Search failed (error 50") || !strings.Contains(state, `"nested":0`) {
		t.Errorf("results box after a failed search: %s", state)
	}
}

// TestBrowserAccountSettings: the Password and Authorized apps tabs, by
// keyboard and pointer: the key cap's message on the key form, a wrong
// current password, a change, and revoking an app. Each page is
// axe-clean.
func TestBrowserAccountSettings(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, func(srv *server.Server) { srv.Config.MaxKeysPerUser = 1 })
	env.MustUserWithPassword(t, email, password, false)
	redirect := "http://127.0.0.1:9/callback"
	cl := env.MustClient(t, "Deploy Bot", true, redirect)
	hb := env.NewBrowser(t)
	hb.SignIn(t, email, password)
	authorizeApp(t, env, hb, cl.ClientID, redirect)

	dir := screenshotDir(t)
	axe := os.Getenv("CHARTCTL_AXE")
	ctx := newBrowser(t)
	run(t, ctx, "sign in", chromedp.Navigate(env.URL+"/signin?return_to=%2Fsettings"))
	signIn(t, ctx, "settings-signin")
	run(t, ctx, "profile", chromedp.WaitVisible(chromedp.CSS(`nav.tabs a[href="/settings/password"]`)))

	// Two keys from the form: the second passes the cap of one.
	for i, name := range []string{"first", "second"} {
		run(t, ctx, "key form "+name,
			chromedp.Navigate(env.URL+"/settings/api-keys/new"),
			chromedp.WaitVisible(chromedp.CSS(`#key-name`)),
			chromedp.SendKeys(chromedp.CSS(`#key-name`), name),
			chromedp.Click(chromedp.CSS(`#create-key`)),
		)
		if i == 0 {
			run(t, ctx, "first key shown", chromedp.WaitVisible(chromedp.CSS(`#new-key`)))
		} else {
			run(t, ctx, "cap message", chromedp.WaitVisible(chromedp.CSS(`#form-error`)))
			shot(t, ctx, dir, "apikey-cap")
			if msg := get(t, ctx, "cap message", chromedp.Text(chromedp.CSS(`#form-error`))); !strings.Contains(msg, "revoke one first") {
				t.Errorf("key cap message %q", msg)
			}
			if axe != "" {
				checkA11y(t, ctx, axeScript(t), "apikey-cap")
			}
		}
	}

	// The password form, by keyboard: Tab from the current password to the
	// new one and its confirmation, Enter submits.
	run(t, ctx, "wrong current password",
		chromedp.Navigate(env.URL+"/settings/password"),
		chromedp.WaitVisible(chromedp.CSS(`#current-password`)),
		chromedp.Focus(chromedp.CSS(`#current-password`)),
		chromedp.KeyEvent("not it\tnew enough password\tnew enough password\r"),
		chromedp.WaitVisible(chromedp.CSS(`#form-error`)),
	)
	shot(t, ctx, dir, "password-wrong")
	if msg := get(t, ctx, "wrong password message", chromedp.Text(chromedp.CSS(`#form-error`))); !strings.Contains(msg, "current password is not correct") {
		t.Errorf("wrong current password message %q", msg)
	}
	if axe != "" {
		checkA11y(t, ctx, axeScript(t), "password-wrong")
	}
	run(t, ctx, "change password",
		chromedp.SendKeys(chromedp.CSS(`#current-password`), password),
		chromedp.SendKeys(chromedp.CSS(`#new-password`), "new enough password"),
		chromedp.SendKeys(chromedp.CSS(`#confirm-password`), "new enough password"),
		chromedp.Click(chromedp.CSS(`#change-password`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert-success`)),
	)
	shot(t, ctx, dir, "password-changed")
	hb2 := env.NewBrowser(t)
	hb2.SignIn(t, email, "new enough password")

	run(t, ctx, "apps",
		chromedp.Click(chromedp.CSS(`nav.tabs a[href="/settings/apps"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#apps-table`)),
	)
	shot(t, ctx, dir, "apps")
	if axe != "" {
		checkA11y(t, ctx, axeScript(t), "apps")
	}
	if row := get(t, ctx, "app row", chromedp.Text(chromedp.CSS(`#apps-table tbody`))); !strings.Contains(row, "Deploy Bot") {
		t.Errorf("apps table %q", row)
	}
	run(t, ctx, "revoke by keyboard",
		chromedp.Focus(chromedp.CSS(`#apps-table button[type=submit]`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`#no-apps`)),
	)
	shot(t, ctx, dir, "apps-revoked")
}
