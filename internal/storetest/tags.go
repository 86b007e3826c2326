package storetest

import (
	"slices"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testChartTags: a chart's OCI tags (its versions with '+' written '_')
// in byte order, a page at a time after last with n, the index following
// puts, deletes and the repository's deletion, never another chart's
// (even one whose name starts with this one's).
func testChartTags(t *testing.T, open Open) {
	s := open(t)
	_, _, err := s.ChartTags(ctx, "nope", "web", "", -1)
	wantCode(t, err, chartctl.ENOTFOUND)
	mustRepo(t, s, "charts", "")
	tags, more, err := s.ChartTags(ctx, "charts", "web", "", -1)
	must(t, err)
	if tags == nil || len(tags) != 0 || more {
		t.Fatalf("ChartTags of a chart without versions = %#v, %v; want [], false", tags, more)
	}
	// Byte order of the tags differs from the versions' ('+' < '-' but
	// '_' > '-') and from SemVer order.
	for _, v := range []string{"1.0.0", "1.10.0", "1.2.0", "1.1.0+build.7", "1.1.1-rc.1", "2.0.0", "v3.0.0"} {
		mustPut(t, s, chart("charts", "web", v))
	}
	mustPut(t, s, chart("charts", "web-app", "0.1.0"))
	mustPut(t, s, chart("charts", "we", "9.9.9"))
	all := []string{"1.0.0", "1.1.0_build.7", "1.1.1-rc.1", "1.10.0", "1.2.0", "2.0.0", "v3.0.0"}
	tags, more, err = s.ChartTags(ctx, "charts", "web", "", -1)
	must(t, err)
	wantStrings(t, "ChartTags(all)", tags, all)
	if more {
		t.Fatal("ChartTags(all): more = true")
	}
	// Every page size walks the whole list exactly once.
	for n := 1; n <= len(all)+1; n++ {
		var got []string
		last := ""
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatalf("n=%d: no end of pages", n)
			}
			page, more, err := s.ChartTags(ctx, "charts", "web", last, n)
			must(t, err)
			if len(page) > n {
				t.Fatalf("n=%d: a page of %d tags", n, len(page))
			}
			got = append(got, page...)
			if !more {
				break
			}
			last = page[len(page)-1]
		}
		wantStrings(t, "ChartTags pages", got, all)
	}
	// last need not be a stored tag: the page starts after it.
	tags, more, err = s.ChartTags(ctx, "charts", "web", "1.1", 2)
	must(t, err)
	wantStrings(t, "ChartTags(last=1.1, n=2)", tags, []string{"1.1.0_build.7", "1.1.1-rc.1"})
	if !more {
		t.Fatal("ChartTags(last=1.1, n=2): more = false")
	}
	tags, more, err = s.ChartTags(ctx, "charts", "web", "v3.0.0", 5)
	must(t, err)
	if len(tags) != 0 || more {
		t.Fatalf("ChartTags after the last tag = %q, %v", tags, more)
	}
	tags, _, err = s.ChartTags(ctx, "charts", "web", "", 0)
	must(t, err)
	if len(tags) != 0 {
		t.Fatalf("ChartTags(n=0) = %q", tags)
	}
	// A replaced version (same key) keeps one tag; a deleted one leaves.
	cv := chart("charts", "web", "2.0.0")
	cv.Digest = Digest("other 2.0.0")
	_, _, _, err = s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	_, _, err = s.DeleteChartVersion(ctx, "charts", "web", "1.1.0+build.7")
	must(t, err)
	tags, _, err = s.ChartTags(ctx, "charts", "web", "", -1)
	must(t, err)
	wantStrings(t, "ChartTags after replace and delete", tags, slices.Delete(slices.Clone(all), 1, 2))
	tags, _, err = s.ChartTags(ctx, "charts", "web-app", "", -1)
	must(t, err)
	wantStrings(t, "ChartTags(web-app)", tags, []string{"0.1.0"})
	// A repository deleted and created again starts without tags.
	_, err = s.DeleteRepository(ctx, "charts")
	must(t, err)
	_, _, err = s.ChartTags(ctx, "charts", "web", "", -1)
	wantCode(t, err, chartctl.ENOTFOUND)
	mustRepo(t, s, "charts", "")
	tags, _, err = s.ChartTags(ctx, "charts", "web", "", -1)
	must(t, err)
	if len(tags) != 0 {
		t.Fatalf("ChartTags in a new repository of a deleted one's name = %q", tags)
	}
}

// testChartNames: every chart holding a version, as repository/chart, in
// byte order across repositories ("a-b/x" before "a/x"), once however
// many versions it has; charts and repositories leave with their last
// version.
func testChartNames(t *testing.T, open Open) {
	s := open(t)
	names, err := s.ChartNames(ctx)
	must(t, err)
	if len(names) != 0 {
		t.Fatalf("ChartNames of an empty store = %q", names)
	}
	mustRepo(t, s, "a", "")
	mustRepo(t, s, "a-b", "")
	mustRepo(t, s, "empty", "")
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		mustPut(t, s, chart("a", "x", v))
	}
	mustPut(t, s, chart("a", "x-y", "1.0.0"))
	mustPut(t, s, chart("a-b", "x", "1.0.0"))
	names, err = s.ChartNames(ctx)
	must(t, err)
	wantStrings(t, "ChartNames", names, []string{"a-b/x", "a/x", "a/x-y"})
	_, _, err = s.DeleteChartVersion(ctx, "a", "x-y", "1.0.0")
	must(t, err)
	_, err = s.DeleteRepository(ctx, "a-b")
	must(t, err)
	names, err = s.ChartNames(ctx)
	must(t, err)
	wantStrings(t, "ChartNames after deletes", names, []string{"a/x"})
}

// testOCINamesManyManifests: a name holding many manifests and blobs is
// listed once, between names that sort around it.
func testOCINamesManyManifests(t *testing.T, open Open) {
	s := open(t)
	for _, name := range []string{"charts/web", "charts/web-app", "charts/we"} {
		for i := range 5 {
			d := Digest(name + string(rune('a'+i)))
			must(t, s.LinkBlob(ctx, name, d, 10))
		}
	}
	names, err := s.Names(ctx)
	must(t, err)
	wantStrings(t, "Names", names, []string{"charts/we", "charts/web", "charts/web-app"})
}
