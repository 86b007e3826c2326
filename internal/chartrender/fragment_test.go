package chartrender_test

import (
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/chartctl/chartctl/internal/chartrender"
)

// A README that closes the page's containers and opens a fake "Install"
// card renders as a balanced fragment: parsed inside a wrapper element, it
// ends inside that wrapper, with the fake card as the wrapper's
// descendant.
func TestReadmeIsABalancedFragment(t *testing.T) {
	src := "# Hello\n\n</div></div></section></main>\n\n<div><h2>Install</h2><pre>helm install evil</pre></div>\n\n<div><div><p>never closed\n"
	out := chartrender.Markdown([]byte(src))
	if strings.Contains(out, "</main>") || strings.Contains(out, "</section>") {
		t.Errorf("stray end tags survive: %s", out)
	}
	if o, c := strings.Count(out, "<div"), strings.Count(out, "</div>"); o != c {
		t.Errorf("%d <div> and %d </div>: %s", o, c, out)
	}
	// In a page: wrapper, README, then an element of the page after it.
	doc, err := xhtml.Parse(strings.NewReader(`<!doctype html><body><main><article id="readme">` + out + `</article><aside id="after">Real install</aside></main>`))
	if err != nil {
		t.Fatal(err)
	}
	var readme, after, fake *xhtml.Node
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Val == "readme" {
					readme = n
				}
				if a.Key == "id" && a.Val == "after" {
					after = n
				}
			}
			if n.DataAtom == atom.Pre && fake == nil && strings.Contains(text(n), "helm install evil") {
				fake = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if readme == nil || after == nil || fake == nil {
		t.Fatalf("page parts missing (readme %v, after %v, fake %v): %s", readme != nil, after != nil, fake != nil, out)
	}
	if !inside(fake, readme) {
		t.Error("the README's fake card is outside the README's container")
	}
	if inside(after, readme) || after.Parent == nil || after.Parent.DataAtom != atom.Main {
		t.Error("the page's element after the README was swallowed by it or moved")
	}
	// Balancing keeps balanced HTML as it is.
	if got := chartrender.Balance(`<p>a <em>b</em></p><ul><li>c</li></ul>`); got != `<p>a <em>b</em></p><ul><li>c</li></ul>` {
		t.Errorf("Balance changed balanced HTML: %s", got)
	}
}

func inside(n, container *xhtml.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == container {
			return true
		}
	}
	return false
}

func text(n *xhtml.Node) string {
	var b strings.Builder
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// Relative links and images of a README refer to the chart's own files
// when the archive holds them, and are left as text otherwise: never a
// link to the 404 page.
func TestReadmeRelativeLinks(t *testing.T) {
	files := map[string]bool{"docs/x.md": true, "img/logo.png": true, "README.md": true, "docs/a b.md": true}
	src := "[guide](docs/x.md) [rooted](/docs/x.md#part) [spaced](docs/a%20b.md) [missing](docs/nope.md) [up](../outside.md) [web](https://example.com/x) [here](#install)\n\n" +
		"![logo](img/logo.png) ![gone](img/gone.png) ![script](docs/x.md)\n"
	out := chartrender.MarkdownIn([]byte(src), files)
	for _, want := range []string{
		`href="` + chartrender.FileRef + `docs/x.md"`,
		`href="` + chartrender.FileRef + `docs/a%20b.md"`,
		`<img src="` + chartrender.FileRef + `img/logo.png" alt="logo"`,
		`href="https://example.com/x"`,
		`href="#readme-install"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
	if strings.Count(out, `href="`+chartrender.FileRef+`docs/x.md"`) != 2 {
		t.Errorf("the chart-rooted link was not resolved: %s", out)
	}
	for _, bad := range []string{"nope.md", "outside.md", "gone.png", `src="` + chartrender.FileRef + `docs/x.md"`} {
		if strings.Contains(out, bad) {
			t.Errorf("%s is linked: %s", bad, out)
		}
	}
	for _, keep := range []string{" missing up ", "[image: gone]"} {
		if !strings.Contains(out, keep) {
			t.Errorf("the text %s of an unresolved reference is gone: %s", keep, out)
		}
	}
	got := chartrender.ResolveFileRefs(out, "/repositories/r/charts/demo/1.0.0/files")
	if !strings.Contains(got, `href="/repositories/r/charts/demo/1.0.0/files/docs/x.md"`) || strings.Contains(got, chartrender.FileRef) {
		t.Errorf("ResolveFileRefs: %s", got)
	}
	// A README cannot write a file reference of its own: the sanitizer
	// drops the unknown scheme, and text stays text.
	forged := chartrender.MarkdownIn([]byte(`<a href="chart-file:docs/x.md">x</a> <img src="chart-file:img/logo.png"> "="chart-file:`+"\n"), files)
	if strings.Contains(chartrender.ResolveFileRefs(forged, "/BASE"), "/BASE") {
		t.Errorf("a forged reference was resolved: %s", forged)
	}
}
