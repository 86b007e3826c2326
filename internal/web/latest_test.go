package web_test

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
)

// textOf returns the text of the first element of page that match
// selects, and whether there is one.
func textOf(t *testing.T, page string, match func(*html.Node) bool) (string, bool) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var found *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if found != nil {
			return
		}
		if n.Type == html.ElementNode && match(n) {
			found = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if found == nil {
		return "", false
	}
	var b strings.Builder
	var text func(*html.Node)
	text = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			text(c)
		}
	}
	text(found)
	return strings.Join(strings.Fields(b.String()), " "), true
}

func byTag(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag }
}

func byID(id string) func(*html.Node) bool {
	return func(n *html.Node) bool {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id {
				return true
			}
		}
		return false
	}
}

// chartCard matches the repository page's chart card: the element that
// links to the chart's page and holds its name, version and badges.
func chartCard(repo, name string) func(*html.Node) bool {
	href := "/repositories/" + repo + "/charts/" + name
	return func(n *html.Node) bool {
		if n.Data != "li" && n.Data != "article" {
			return false
		}
		var has func(*html.Node) bool
		has = func(n *html.Node) bool {
			for _, a := range n.Attr {
				if a.Key == "href" && a.Val == href {
					return true
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if has(c) {
					return true
				}
			}
			return false
		}
		return has(n)
	}
}

// The dashboard's latest is the CLI's and Helm's: a chart page shows the
// newest stable version by default even when a newer pre-release exists,
// and a pre-release page links to it as the latest; a chart with only
// pre-releases shows its newest, marked as a pre-release with no stable
// version. The repository page's cards show the same version.
func TestLatestIsNewestStable(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustRepo(t, "stable", "public")
	for _, ch := range []testkit.Chart{
		{Name: "app", Version: "1.0.0"}, {Name: "app", Version: "1.1.0"}, {Name: "app", Version: "2.0.0-rc.1"},
		{Name: "beta", Version: "0.1.0-alpha.1"}, {Name: "beta", Version: "0.1.0-alpha.2"},
	} {
		if r := env.Upload(t, "stable", env.AdminKey, testkit.MakeChart(t, ch), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s %s: %d %s", ch.Name, ch.Version, r.StatusCode, r.Body)
		}
	}
	b := env.NewBrowser(t)
	get := func(path string) string {
		t.Helper()
		p := b.Get(t, path)
		if p.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, p.StatusCode)
		}
		return p.Body
	}

	app := get("/repositories/stable/charts/app")
	if h1, _ := textOf(t, app, byTag("h1")); h1 != "app 1.1.0" {
		t.Errorf("the chart page shows %q by default, want app 1.1.0", h1)
	}
	if _, ok := textOf(t, app, byID("latest-link")); ok {
		t.Error("the latest version's page links to another latest")
	}
	rc := get("/repositories/stable/charts/app/2.0.0-rc.1")
	if h1, _ := textOf(t, rc, byTag("h1")); h1 != "app 2.0.0-rc.1 pre-release" {
		t.Errorf("the pre-release page's heading: %q", h1)
	}
	if link, _ := textOf(t, rc, byID("latest-link")); link != "latest is 1.1.0" {
		t.Errorf("the pre-release page says %q, want latest is 1.1.0", link)
	}

	beta := get("/repositories/stable/charts/beta")
	if h1, _ := textOf(t, beta, byTag("h1")); h1 != "beta 0.1.0-alpha.2 pre-release" {
		t.Errorf("a chart with only pre-releases shows %q, want its newest, marked", h1)
	}
	if s, _ := textOf(t, beta, byID("no-stable")); s != "no stable version yet" {
		t.Errorf("a chart with only pre-releases does not say it has no stable version: %q", s)
	}
	old := get("/repositories/stable/charts/beta/0.1.0-alpha.1")
	if link, _ := textOf(t, old, byID("latest-link")); link != "newest is 0.1.0-alpha.2 (pre-release)" {
		t.Errorf("an older pre-release links %q", link)
	}

	repo := get("/repositories/stable")
	if card, _ := textOf(t, repo, chartCard("stable", "app")); !strings.Contains(card, "1.1.0") || strings.Contains(card, "2.0.0-rc.1") || strings.Contains(card, "pre-release") {
		t.Errorf("the repository page's app card: %q, want 1.1.0", card)
	}
	if card, _ := textOf(t, repo, chartCard("stable", "beta")); !strings.Contains(card, "0.1.0-alpha.2 pre-release") {
		t.Errorf("the repository page's beta card: %q, want 0.1.0-alpha.2 marked pre-release", card)
	}
}
