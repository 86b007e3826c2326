package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/chartctl/chartctl/client"
)

// TestBrowserAccessTabGrantAndRevoke: the organization's owner, in a real
// Chromium and with the keyboard alone for the forms, opens a private
// repository's Access tab from its page, grants team platform the write
// role, sees it listed, revokes it, and follows the listed robot to its
// page; axe-core finds no serious violation on the tab (with and without
// a grant; light and dark) or on the robot's page.
func TestBrowserAccessTabGrantAndRevoke(t *testing.T) {
	c := setupAccess(t)
	axe := axeScript(t)
	ctx := newBrowser(t)
	signInAs(t, ctx, c.URL, ownerEmail, "%2Frepositories%2Finternal-charts")
	run(t, ctx, "open the Access tab",
		chromedp.Click(chromedp.CSS(`#repo-access`)),
		chromedp.WaitVisible(chromedp.CSS(`#grant-form`)),
	)
	checkA11y(t, ctx, axe, "the Access tab")

	run(t, ctx, "grant with the keyboard",
		// The team choice is the default; type the name, pick the role
		// with the arrow keys and submit with Enter.
		chromedp.Focus(chromedp.CSS(`#grant-name`)),
		chromedp.KeyEvent("platform\t"),
		chromedp.KeyEvent(kb.ArrowDown), // read → write
		chromedp.Focus(chromedp.CSS(`#grant-name`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-grant="team:platform"]`)),
		screenshot(t, "repo-access-granted"),
	)
	if row := get(t, ctx, "read the grant", chromedp.Text(chromedp.CSS(`tr[data-grant="team:platform"]`))); !strings.Contains(row, "write") {
		t.Errorf("grant row %q, want the write role", row)
	}
	if flash := get(t, ctx, "read the notice", chromedp.Text(chromedp.CSS(`.alert-success`))); !strings.Contains(flash, "write role") {
		t.Errorf("notice %q", flash)
	}
	checkA11y(t, ctx, axe, "the Access tab with a grant")
	run(t, ctx, "dark, on a phone", chromedp.EmulateViewport(390, 844), colorScheme("dark"))
	checkA11y(t, ctx, axe, "the Access tab with a grant, dark, on a phone")
	run(t, ctx, "back to light, on a desktop", chromedp.EmulateViewport(1280, 860), colorScheme("light"))
	var list struct{ Data []client.Grant }
	c.Do(t, http.MethodGet, "/v1/repositories/internal-charts/access", c.ownerKey, nil).JSON(t, &list)
	if len(list.Data) != 1 || list.Data[0].Name != "platform" || list.Data[0].Role != "write" {
		t.Fatalf("after the form the API lists %+v", list.Data)
	}

	run(t, ctx, "revoke with the keyboard",
		chromedp.Focus(chromedp.CSS(`tr[data-grant="team:platform"] button[type=submit]`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`#no-grants`)),
	)
	if flash := get(t, ctx, "read the notice", chromedp.Text(chromedp.CSS(`.alert-success`))); !strings.Contains(flash, "was revoked") {
		t.Errorf("notice %q", flash)
	}
	c.Do(t, http.MethodGet, "/v1/repositories/internal-charts/access", c.ownerKey, nil).JSON(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("after the revocation the API lists %+v", list.Data)
	}

	run(t, ctx, "open the robot",
		chromedp.Click(chromedp.CSS(`#access-robots-table a[href="/organizations/acme/robots/ci-push"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#robot-details`)),
		screenshot(t, "robot"),
	)
	checkA11y(t, ctx, axe, "the robot's page")
	run(t, ctx, "dark", colorScheme("dark"))
	checkA11y(t, ctx, axe, "the robot's page, dark")
}
