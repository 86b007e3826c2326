package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestAgainstRealServer browses a real in-process server through the real
// SDK: repositories → charts → versions → detail, then teams → members.
func TestAgainstRealServer(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "public")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if r := srv.Upload(t, "stable", srv.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "redis", Version: v, Description: "Key-value store",
			Extra: "home: https://redis.io\nmaintainers:\n  - name: Jane Doe\n    email: jane@example.com\n"}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	c, err := client.New(srv.URL, client.WithToken(srv.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := c.Organizations.Create(ctx, &client.CreateOrganizationRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.Create(ctx, &client.CreateTeamRequest{Name: "platform", Organization: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.AddMember(ctx, "platform", &client.AddMemberRequest{Email: "dev@acme.test", Role: "maintainer"}); err != nil {
		t.Fatal(err)
	}

	s := setupSession(t, NewClientAPI(c), 100, 30)
	s.waitFor("stable")
	s.press("enter")
	s.waitFor("Key-value store")
	s.press("enter")
	s.waitFor("1.0.0")
	s.press("enter")
	// The maintainers come from the version's own endpoint.
	s.waitFor("Jane Doe <jane@example.com>")
	s.press("tab")
	s.waitFor("platform")
	s.press("enter")
	s.waitFor("dev@acme.test")
	view := s.finish()
	if !strings.Contains(view, "maintainer") {
		t.Fatalf("members view:\n%s", view)
	}
}

// The charts list's LATEST column follows client.Latest, the rule of the
// CLI and the dashboard: the newest stable version, not a newer
// pre-release; a chart with only pre-releases shows its newest, marked
// "(pre)". Paged two versions at a time, so the stable version of app
// arrives on a later page than its pre-releases.
func TestChartsListLatestIsNewestStable(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "public")
	for _, ch := range []testkit.Chart{
		{Name: "app", Version: "1.0.0"}, {Name: "app", Version: "1.1.0"}, {Name: "app", Version: "2.0.0-rc.1"}, {Name: "app", Version: "2.0.0-rc.2"},
		{Name: "beta", Version: "0.1.0-alpha.1"}, {Name: "beta", Version: "0.1.0-alpha.2"},
	} {
		if r := srv.Upload(t, "stable", srv.AdminKey, testkit.MakeChart(t, ch), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s %s: %d %s", ch.Name, ch.Version, r.StatusCode, r.Body)
		}
	}
	c, err := client.New(srv.URL, client.WithToken(srv.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	m := New(NewClientAPI(c), Options{Server: testServer, PageSize: 2})
	m = settle(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, msg := range exec(m.Init()) {
		m = settle(t, m, msg)
	}
	m = settle(t, m, press("enter"))
	for i := 0; i < 10 && !m.current().done; i++ {
		m = settle(t, m, press("G")) // to the end: the next pages load
	}
	s := m.current()
	if !s.done || len(s.rows) != 2 {
		t.Fatalf("charts of stable: done %v, %d rows", s.done, len(s.rows))
	}
	for i, want := range [][]string{{"app", "1.1.0", "4"}, {"beta", "0.1.0-alpha.2 (pre)", "2"}} {
		if got := s.rows[i].cells; got[0] != want[0] || got[1] != want[1] || got[3] != want[2] {
			t.Errorf("row %d: %q, want name, latest and count %q", i, got, want)
		}
	}
}

// The access key lists a repository's grants from a real server through
// the real SDK, and toggles back to its charts.
func TestAccessAgainstRealServer(t *testing.T) {
	srv := testkit.StartServer(t)
	c, err := client.New(srv.URL, client.WithToken(srv.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := c.Organizations.Create(ctx, &client.CreateOrganizationRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.Create(ctx, &client.CreateTeamRequest{Name: "web", Organization: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "web-charts", Organization: "acme"}); err != nil {
		t.Fatal(err)
	}
	if r := srv.Upload(t, "web-charts", srv.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "frontend", Version: "1.0.0", Description: "The web front end"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	srv.MustUser(t, "guest@partner.test", false)
	for _, g := range []client.GrantRequest{{Team: "web", Role: "maintain"}, {User: "guest@partner.test", Role: "read"}} {
		if _, _, err := c.Repositories.Grant(ctx, "web-charts", &g); err != nil {
			t.Fatalf("grant %+v: %v", g, err)
		}
	}

	s := setupSession(t, NewClientAPI(c), 100, 30)
	s.waitFor("web-charts")
	s.press("enter")
	s.waitFor("The web front end")
	s.press("a")
	s.waitFor("guest@partner.test")
	view := s.finish()
	for _, want := range []string{"team", "web", "maintain", "user", "read", "1/2 grants"} {
		if !strings.Contains(view, want) {
			t.Fatalf("access view lacks %q:\n%s", want, view)
		}
	}
}

// TestValuesDiffAgainstRealServer: from a chart's versions, d shows the
// values diff of the version under the cursor against the previous one
// (keys added, removed and changed, values.yaml's text diff, the other
// files by name), scrolled with the keys of a page; m marks a version
// and d on another compares the two; a newest-only list says how to
// compare. The real server computes the diff (web-1.0.0 → web-1.1.0 of
// internal/chartdiff's fixtures).
func TestValuesDiffAgainstRealServer(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "public")
	for _, dir := range []string{"web-1.0.0/web", "web-1.1.0/web"} {
		if r := srv.Upload(t, "stable", srv.AdminKey, testkit.ArchiveDir(t, "../internal/chartdiff/testdata/"+dir), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", dir, r.StatusCode, r.Body)
		}
	}
	c, err := client.New(srv.URL, client.WithToken(srv.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	s := setupSession(t, NewClientAPI(c), 100, 90)
	s.waitFor("stable")
	s.press("enter")
	s.waitFor("web")
	s.press("enter")
	s.waitFor("1.0.0")
	// On the newest version: against the one below it.
	s.press("d")
	s.waitFor("Other files that differ")
	view := s.finish()
	for _, want := range []string{
		"web 1.0.0 → 1.1.0",
		"Added (",
		"   + image.digest",
		"   + service.ports.https",
		"Removed (",
		"   - metrics.enabled",
		"Changed defaults (",
		`   ~ replicaCount: 1 → 2`,
		`   ~ image.tag: "1.25.3" → "1.27.0"`,
		`   ~ service.type: "LoadBalancer" → "ClusterIP"`,
		"values.yaml (modified)",
		"   --- a/values.yaml",
		"   -replicaCount: 1",
		"   +replicaCount: 2",
		"   @@ ",
		"modified  Chart.yaml",
		"chartctl chart diff web 1.0.0 1.1.0 --repo stable",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the values diff lacks %q:\n%s", want, view)
		}
	}
	if t.Failed() {
		return
	}

	// Marked: m on 1.0.0, d on 1.1.0 compares 1.0.0 → 1.1.0 too; d on
	// the oldest version with nothing marked says what to do.
	s = setupSession(t, NewClientAPI(c), 100, 20)
	s.waitFor("stable")
	s.press("enter")
	s.waitFor("web")
	s.press("enter")
	s.waitFor("1.0.0")
	s.press("j", "d")
	s.waitFor("No previous version of web is listed")
	s.press("m")
	s.waitFor("marked 1.0.0")
	s.press("k", "d")
	s.waitFor("Added (")
	// A short window scrolls the diff: G goes to its end.
	s.press("G")
	s.waitFor("shows them")
	view = s.finish()
	if !strings.Contains(view, "chartctl chart diff web 1.0.0 1.1.0 --repo stable shows them") || !strings.Contains(view, "of 64 · ↑↓ scroll") ||
		strings.Contains(view, "Changed defaults") {
		t.Fatalf("the end of the marked diff:\n%s", view)
	}
}
