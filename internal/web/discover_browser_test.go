package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// setupSigned adds to the catalog a pgp trust entry of platform-charts and
// three versions of a chart "signed": 1.0.0 not signed at all, 1.1.0
// signed by a key nobody trusts, 1.2.0 (the latest) by the trusted key.
func setupSigned(t *testing.T, c *catalog) (signer string) {
	t.Helper()
	helm := testkit.HelmBinary(t)
	trusted := testkit.MustGPGSigner(t, "Release Bot <release@example.com>")
	stranger := testkit.MustGPGSigner(t, "Someone Else <else@example.com>")
	pub, err := os.ReadFile(trusted.Pubring)
	if err != nil {
		t.Fatal(err)
	}
	c.must(t, http.MethodPost, "/v1/repositories/platform-charts/trust", client.TrustRequest{Name: "release", Kind: "pgp", KeyBase64: base64.StdEncoding.EncodeToString(pub)})
	upload := func(archive, prov []byte) {
		t.Helper()
		files := map[string][]byte{"chart": archive}
		if prov != nil {
			files["prov"] = prov
		}
		body, ctype := testkit.Multipart(t, files)
		if r := c.Do(t, http.MethodPost, "/v1/repositories/platform-charts/charts", c.ownerKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode != http.StatusOK && r.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	unsigned, _ := testkit.MustSignedChart(t, helm, "signed", "1.0.0", trusted)
	upload(unsigned, nil)
	upload(testkit.MustSignedChart(t, helm, "signed", "1.1.0", stranger))
	upload(testkit.MustSignedChart(t, helm, "signed", "1.2.0", trusted))
	return trusted.Name
}

// TestVerdictOnVersionPages: a version's page says "Signed by …, verified"
// for a version whose provenance verified against the repository's
// keyring (real gpg and helm), "Signed, not verified" with the reason for
// one signed by an unknown key, and "Not signed" for one without a
// signature; the search's signed filter finds only the first.
func TestVerdictOnVersionPages(t *testing.T) {
	c := setupCatalog(t)
	signer := setupSigned(t, c)
	b := c.NewBrowser(t)
	for v, want := range map[string]string{
		"1.2.0": `<p class="verdict verdict-verified" id="verdict"><span class="verdict-mark" aria-hidden="true">✓</span> Signed by ` + template(signer) + `, verified</p>`,
		"1.1.0": `<p class="verdict verdict-unverified" id="verdict"><span class="verdict-mark" aria-hidden="true">!</span> Signed, not verified</p>`,
		"1.0.0": `<p class="verdict verdict-unsigned" id="verdict"><span class="verdict-mark" aria-hidden="true">–</span> Not signed</p>`,
	} {
		p := b.Get(t, "/repositories/platform-charts/charts/signed/"+v)
		if p.StatusCode != http.StatusOK || !strings.Contains(p.Body, want) {
			t.Errorf("%s: %d, no %s in\n%s", v, p.StatusCode, want, p.Body)
		}
		if v == "1.2.0" && !strings.Contains(p.Body, "by the trust entry release") {
			t.Errorf("%s does not name the trust entry that verified it", v)
		}
		if v == "1.1.0" && !strings.Contains(p.Body, `<span class="badge badge-danger">not verified</span> Helm provenance (PGP)`) {
			t.Errorf("%s does not list its unverified signature", v)
		}
	}
	s := b.Get(t, "/search?q=signed&signed=true")
	if !strings.Contains(s.Body, "1 chart found") || !strings.Contains(s.Body, `<span class="badge badge-public">signed</span>`) {
		t.Errorf("signed=true: %s", s.Body)
	}
}

// template escapes s as html/template writes text.
func template(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

// axeAtWidths runs axe on the current page at desktop and phone widths,
// light and dark, and checks that the page does not scroll sideways on
// the phone.
func axeAtWidths(t *testing.T, ctx context.Context, axe, what string) {
	t.Helper()
	shot := strings.ReplaceAll(what, " ", "-")
	run(t, ctx, what+" screenshot", screenshot(t, shot+"-desktop"))
	checkA11y(t, ctx, axe, what+" (desktop)")
	run(t, ctx, what+" on a phone", chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile), colorScheme("dark"), screenshot(t, shot+"-phone-dark"))
	checkA11y(t, ctx, axe, what+" (phone, dark)")
	widths := get(t, ctx, what+" widths", chromedp.Evaluate[string](`JSON.stringify([document.documentElement.scrollWidth, document.documentElement.clientWidth])`))
	var w [2]int
	if err := json.Unmarshal([]byte(widths), &w); err != nil || w[0] > w[1] {
		wide := get(t, ctx, "wide elements", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("main *")).filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(-5).map(e => e.tagName + (e.id ? "#" + e.id : "") + "." + e.className).join(" ")`))
		t.Errorf("%s at 375 px: scrollWidth, clientWidth = %s: it scrolls sideways (widest: %s)", what, widths, wide)
	}
	run(t, ctx, what+" back on a desktop", chromedp.EmulateViewport(1280, 860), colorScheme("light"))
}

// TestBrowserDiffView: from the chart page to the diff view by keyboard
// only, the values diff and the files; side by side; the repository
// picker reloads the To list; axe clean at desktop and phone widths.
func TestBrowserDiffView(t *testing.T) {
	c := setupDiscovery(t)
	axe := axeScript(t)
	ctx := newBrowser(t)
	signInAs(t, ctx, c.URL, ownerEmail, "%2Frepositories%2Fplatform-charts%2Fcharts%2Fweb")
	run(t, ctx, "chart page", chromedp.WaitVisible(chromedp.CSS(`#what-changed`)))
	axeAtWidths(t, ctx, axe, "chart page")
	// The keyboard reaches the diff: focus the link, press Enter.
	run(t, ctx, "to the diff by keyboard",
		chromedp.Focus(chromedp.CSS(`#compare-versions`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#values-table`)),
	)
	keys := get(t, ctx, "values keys", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#values-table tr[data-key]")).map(r => r.dataset.key + ":" + r.querySelector(".badge").textContent).join(",")`))
	if keys != "ingress.enabled:added,legacyProbe:removed,replicaCount:changed,image.tag:changed" && keys != "ingress.enabled:added,legacyProbe:removed,image.tag:changed,replicaCount:changed" {
		t.Errorf("values diff %q", keys)
	}
	files := get(t, ctx, "files", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#file-list a")).map(a => a.textContent).join(",")`))
	if files != "Chart.yaml,templates/deployment.yaml,templates/ingress.yaml,values.yaml" {
		t.Errorf("changed files %q", files)
	}
	axeAtWidths(t, ctx, axe, "unified diff")
	// A file's link moves to its diff; its scrolling region takes focus.
	run(t, ctx, "to a file",
		chromedp.Focus(chromedp.CSS(`#file-list a[href="#file-3"]`)),
		chromedp.KeyEvent(kb.Enter),
	)
	if h := get(t, ctx, "hash", chromedp.Evaluate[string](`location.hash`)); h != "#file-3" {
		t.Errorf("after the file link: %q", h)
	}
	run(t, ctx, "side by side",
		chromedp.Click(chromedp.CSS(`a[href*="view=split"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.diff-split`)),
	)
	axeAtWidths(t, ctx, axe, "side-by-side diff")
	// The picker: another repository's versions fill the To list.
	run(t, ctx, "pick another repository",
		chromedp.SetValue(chromedp.CSS(`#to_repo`), "internal-charts"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("to_repo").dispatchEvent(new Event("change"))`),
		chromedp.WaitReady(chromedp.CSS(`#to option[value="2.0.0"]`)),
		chromedp.Click(chromedp.CSS(`#compare`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key="internalOnly"]`)),
	)
	if u := get(t, ctx, "url", chromedp.Evaluate[string](`location.search`)); !strings.Contains(u, "to_repo=internal-charts") || !strings.Contains(u, "to=2.0.0") {
		t.Errorf("cross-repository diff at %q", u)
	}
}

// TestBrowserSearchFilters: the filters fold open, an image search lists
// the version that deploys it, a facet narrows the results; search as you
// type keeps the filters; axe clean at desktop and phone widths.
func TestBrowserSearchFilters(t *testing.T) {
	c := setupDiscovery(t)
	axe := axeScript(t)
	ctx := newBrowser(t)
	run(t, ctx, "image search",
		chromedp.Navigate(c.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.Click(chromedp.CSS(`#search-filters summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#f-image`)),
		chromedp.SendKeys(chromedp.CSS(`#f-image`), "nginx:1.27"),
		chromedp.Click(chromedp.CSS(`#apply-filters`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-results a[href="/repositories/platform-charts/charts/web/1.1.0"]`)),
	)
	axeAtWidths(t, ctx, axe, "image search")
	run(t, ctx, "a text search, then a facet",
		chromedp.Navigate(c.URL+"/search?q=web"),
		chromedp.WaitVisible(chromedp.CSS(`#facets`)),
		chromedp.Click(chromedp.CSS(`#facets a[data-facet="MIT"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#facets a[data-facet="MIT"][aria-current="true"]`)),
	)
	if n := get(t, ctx, "results", chromedp.Evaluate[int](`document.querySelectorAll("#search-results li").length`)); n != 1 {
		t.Errorf("after the MIT facet: %d results", n)
	}
	axeAtWidths(t, ctx, axe, "search with facets")
	// As you type, with a filter set: the results keep it.
	run(t, ctx, "search as you type with a filter",
		chromedp.Navigate(c.URL+"/search?license=Apache-2.0"),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), "ngi"),
		// The script replaces the address once the results are in.
		chromedp.Poll[chromedp.Void](`location.search.includes("q=ngi")`),
	)
	if u := get(t, ctx, "url", chromedp.Evaluate[string](`location.search`)); !strings.Contains(u, "license=Apache-2.0") {
		t.Errorf("search as you type dropped the filter: %q", u)
	}
	if n := get(t, ctx, "results", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#search-results a.chart-name")).map(a => a.textContent).join(",")`)); n != "nginx" {
		t.Errorf("as you type with license=Apache-2.0: %q", n)
	}
}

// TestBrowserVerdict: a version's page shows its verdict in a real
// browser, and is axe clean at desktop and phone widths.
func TestBrowserVerdict(t *testing.T) {
	c := setupCatalog(t)
	signer := setupSigned(t, c)
	axe := axeScript(t)
	ctx := newBrowser(t)
	for v, want := range map[string]string{"1.2.0": "Signed by " + signer + ", verified", "1.1.0": "Signed, not verified", "1.0.0": "Not signed"} {
		run(t, ctx, "version "+v, chromedp.Navigate(c.URL+"/repositories/platform-charts/charts/signed/"+v), chromedp.WaitVisible(chromedp.CSS(`#verdict`)))
		if got := strings.TrimSpace(get(t, ctx, "verdict", chromedp.Text(chromedp.CSS(`#verdict`)))); !strings.HasSuffix(got, want) {
			t.Errorf("%s: verdict %q, want %q", v, got, want)
		}
		if v == "1.2.0" {
			axeAtWidths(t, ctx, axe, "verified version")
		}
	}
}
