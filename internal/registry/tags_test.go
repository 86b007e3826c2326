package registry_test

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// linkNext matches the Link header of a paginated list, as the
// distribution spec writes it.
var linkNext = regexp.MustCompile(`^<(/v2/[^>]+)>; rel="next"$`)

// walkPages follows a paginated list from first through its Link headers
// and returns every page's entries, failing on a page larger than n or a
// Link that does not carry n and the page's last entry.
func walkPages(t *testing.T, e *env, first, key string, n int, field string) []string {
	t.Helper()
	var all []string
	next := first
	for pages := 0; next != ""; pages++ {
		if pages > 50 {
			t.Fatalf("%s: no end of pages", first)
		}
		r := e.do(t, "GET", next, key, nil)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", next, r.StatusCode, r.Body)
		}
		var body map[string]any
		r.JSON(t, &body)
		var page []string
		for _, v := range body[field].([]any) {
			page = append(page, v.(string))
		}
		if n >= 0 && len(page) > n {
			t.Fatalf("GET %s: %d entries, n is %d", next, len(page), n)
		}
		all = append(all, page...)
		next = ""
		if link := r.Header.Get("Link"); link != "" {
			m := linkNext.FindStringSubmatch(link)
			if m == nil || len(page) == 0 {
				t.Fatalf("GET %s: Link %q after %d entries", first, link, len(page))
			}
			next = m[1]
		}
	}
	return all
}

// TestTagsListPagination: GET /v2/<name>/tags/list over HTTP lists a
// chart's versions as tags ('+' written '_') in byte order, with a
// version pushed over OCI once, paginated with n and last and a Link
// header to the next page as the distribution spec says; the last page
// has no Link; a bad n is refused.
func TestTagsListPagination(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "pub", "public")
	for _, v := range []string{"1.0.0", "1.10.0", "1.2.0", "1.1.0+build.7", "1.1.1-rc.1"} {
		if r := e.Upload(t, "pub", e.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: v}), ""); r.StatusCode != 200 {
			t.Fatalf("upload web %s: %d %s", v, r.StatusCode, r.Body)
		}
	}
	// A chart whose name starts with the other's: never in its list.
	if r := e.Upload(t, "pub", e.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web-app", Version: "9.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload web-app: %d %s", r.StatusCode, r.Body)
	}
	// A version pushed over OCI is both a stored tag and a chart version.
	c, err := testkit.NewOCIChart("web", "2.0.0", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := testkit.PushLikeHelm(http.DefaultClient, e.URL, "pub", "anyone", e.AdminKey, c); err != nil {
		t.Fatal(err)
	}
	want := []string{"1.0.0", "1.1.0_build.7", "1.1.1-rc.1", "1.10.0", "1.2.0", "2.0.0"}
	if got := walkPages(t, e, "/v2/pub/web/tags/list", "", -1, "tags"); !slices.Equal(got, want) {
		t.Fatalf("tags = %q, want %q", got, want)
	}
	for n := 1; n <= len(want)+1; n++ {
		first := "/v2/pub/web/tags/list?n=" + itoa(n)
		if got := walkPages(t, e, first, "", n, "tags"); !slices.Equal(got, want) {
			t.Fatalf("n=%d: tags = %q, want %q", n, got, want)
		}
	}
	r := e.do(t, "GET", "/v2/pub/web/tags/list?n=2&last=1.1.0_build.7", "", nil)
	var page struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	r.JSON(t, &page)
	if page.Name != "pub/web" || !slices.Equal(page.Tags, []string{"1.1.1-rc.1", "1.10.0"}) ||
		r.Header.Get("Link") != `</v2/pub/web/tags/list?n=2&last=1.10.0>; rel="next"` {
		t.Fatalf("page after 1.1.0_build.7: %s, Link %q", r.Body, r.Header.Get("Link"))
	}
	r = e.do(t, "GET", "/v2/pub/web/tags/list?n=2&last=1.2.0", "", nil)
	r.JSON(t, &page)
	if !slices.Equal(page.Tags, []string{"2.0.0"}) || r.Header.Get("Link") != "" {
		t.Fatalf("last page: %s, Link %q", r.Body, r.Header.Get("Link"))
	}
	r = e.do(t, "GET", "/v2/pub/web/tags/list?n=0", "", nil)
	r.JSON(t, &page)
	if r.StatusCode != 200 || len(page.Tags) != 0 || page.Tags == nil {
		t.Fatalf("n=0: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/pub/web/tags/list?n=-1", "", nil); r.StatusCode != 400 {
		t.Fatalf("n=-1: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/pub/web/tags/list?n=x", "", nil); r.StatusCode != 400 {
		t.Fatalf("n=x: %d %s", r.StatusCode, r.Body)
	}
	// A deleted version leaves the list at once.
	if r := e.Do(t, "DELETE", "/v1/repositories/pub/charts/web/1.10.0", e.AdminKey, nil); r.StatusCode != 200 && r.StatusCode != 204 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	want = slices.DeleteFunc(want, func(s string) bool { return s == "1.10.0" })
	if got := walkPages(t, e, "/v2/pub/web/tags/list?n=4", "", 4, "tags"); !slices.Equal(got, want) {
		t.Fatalf("after delete: tags = %q, want %q", got, want)
	}
}

// TestCatalogPagination: /v2/_catalog merges names pushed over OCI with
// charts uploaded over /v1, in byte order, each once, paginated with n,
// last and Link, and shows a user only the repositories they may pull.
func TestCatalogPagination(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "pub", "public")
	mustRepoIn(t, e, "pub-b", "public")
	mustRepoIn(t, e, "priv", "private")
	for _, c := range []struct{ repo, name, version string }{
		{"pub", "web", "1.0.0"}, {"pub", "web", "1.1.0"}, {"pub", "web-app", "1.0.0"},
		{"pub-b", "x", "1.0.0"}, {"priv", "secret", "1.0.0"},
	} {
		if r := e.Upload(t, c.repo, e.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: c.name, Version: c.version}), ""); r.StatusCode != 200 {
			t.Fatalf("upload %v: %d %s", c, r.StatusCode, r.Body)
		}
	}
	e.pushImage(t, "pub/app", "v1", e.AdminKey)
	e.pushImage(t, "pub/app", "v2", e.AdminKey)
	e.pushImage(t, "priv/app", "v1", e.AdminKey)
	c, err := testkit.NewOCIChart("web", "2.0.0", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := testkit.PushLikeHelm(http.DefaultClient, e.URL, "pub", "anyone", e.AdminKey, c); err != nil {
		t.Fatal(err)
	}
	user := e.MustUser(t, "reader@example.com", false)
	key := e.MustKey(t, user, chartctl.AllScopes...)
	visible := []string{"pub-b/x", "pub/app", "pub/web", "pub/web-app"}
	all := []string{"priv/app", "priv/secret", "pub-b/x", "pub/app", "pub/web", "pub/web-app"}
	for n := 1; n <= len(all)+1; n++ {
		first := "/v2/_catalog?n=" + itoa(n)
		if got := walkPages(t, e, first, key, n, "repositories"); !slices.Equal(got, visible) {
			t.Fatalf("n=%d as a reader: %q, want %q", n, got, visible)
		}
		if got := walkPages(t, e, first, e.AdminKey, n, "repositories"); !slices.Equal(got, all) {
			t.Fatalf("n=%d as the admin: %q, want %q", n, got, all)
		}
	}
	r := e.do(t, "GET", "/v2/_catalog?n=1&last=pub-b/x", key, nil)
	if r.Header.Get("Link") != `</v2/_catalog?n=1&last=pub%2Fapp>; rel="next"` {
		t.Fatalf("Link after pub-b/x: %q %s", r.Header.Get("Link"), r.Body)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
