package storetest

import (
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testHeldVersions: a version stored with HeldUntil is kept (ChartVersion
// shows it, with its deadline) but left out of listings, pages, latest,
// the Helm index, chart tags and chart names unless IncludeHeld asks for
// it; HeldChartVersions finds it once its deadline is due; release makes
// it an ordinary version (indexed, tagged) exactly once; expiry deletes
// it only while held past its deadline, and touches no other version.
func testHeldVersions(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	mustRepo(t, s, "other", "")
	mustPut(t, s, chart("apps", "web", "1.0.0"))
	mustPut(t, s, chart("other", "web", "2.0.0"))
	until := base.Add(10 * time.Minute)
	held := chart("apps", "web", "2.0.0")
	held.HeldUntil = &until
	mustPut(t, s, held)
	alone := chart("apps", "lonely", "0.1.0")
	alone.HeldUntil = &until
	mustPut(t, s, alone)

	cv, err := s.ChartVersion(ctx, "apps", "web", "2.0.0")
	must(t, err)
	if cv.HeldUntil == nil || !cv.HeldUntil.Equal(until) {
		t.Fatalf("ChartVersion(held).HeldUntil = %v, want %v", cv.HeldUntil, until)
	}
	list := func(f chartctl.ChartFilter) []string {
		t.Helper()
		cvs, err := s.ChartVersions(ctx, "apps", f)
		must(t, err)
		return versionsOf(cvs)
	}
	wantStrings(t, "ChartVersions", list(chartctl.ChartFilter{}), []string{"web@1.0.0"})
	wantStrings(t, "ChartVersions(Latest)", list(chartctl.ChartFilter{Latest: true}), []string{"web@1.0.0"})
	wantStrings(t, "ChartVersions(web)", list(chartctl.ChartFilter{Name: "web"}), []string{"web@1.0.0"})
	wantStrings(t, "ChartVersions(IncludeHeld)", list(chartctl.ChartFilter{IncludeHeld: true}),
		[]string{"lonely@0.1.0", "web@2.0.0", "web@1.0.0"})
	page, total, err := s.ChartVersionPage(ctx, "apps", chartctl.ChartFilter{}, 0, 10)
	must(t, err)
	if total != 1 || len(page) != 1 {
		t.Fatalf("ChartVersionPage: total %d, %d versions; want 1, 1", total, len(page))
	}
	entries, err := s.IndexEntries(ctx, "apps")
	must(t, err)
	wantStrings(t, "IndexEntries", versionsOf(entries), []string{"web@1.0.0"})
	_, err = s.IndexEntry(ctx, "apps", "web", "2.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	tags, _, err := s.ChartTags(ctx, "apps", "web", "", -1)
	must(t, err)
	wantStrings(t, "ChartTags", tags, []string{"1.0.0"})
	names, err := s.ChartNames(ctx)
	must(t, err)
	wantStrings(t, "ChartNames", names, []string{"apps/web", "other/web"})

	due, err := s.HeldChartVersions(ctx, until.Add(-time.Second))
	must(t, err)
	wantStrings(t, "HeldChartVersions(before the deadline)", versionsOf(due), nil)
	due, err = s.HeldChartVersions(ctx, until)
	must(t, err)
	if len(due) != 2 || due[0].Repository != "apps" || due[0].HeldUntil == nil {
		t.Fatalf("HeldChartVersions(deadline) = %q, want both held versions of apps", versionsOf(due))
	}

	// Release: only the stored archive, only once.
	wantCode(t, s.ReleaseChartVersion(ctx, "apps", "web", "2.0.0", Digest("other"), []byte("name: web\n"), nil), chartctl.ENOTFOUND)
	wantCode(t, s.ReleaseChartVersion(ctx, "apps", "web", "1.0.0", chart("apps", "web", "1.0.0").Digest, nil, nil), chartctl.ECONFLICT)
	must(t, s.ReleaseChartVersion(ctx, "apps", "web", "2.0.0", held.Digest, []byte("name: web\nversion: 2.0.0\n"), []byte(`{"name":"web","version":"2.0.0"}`)))
	wantCode(t, s.ReleaseChartVersion(ctx, "apps", "web", "2.0.0", held.Digest, nil, nil), chartctl.ECONFLICT)
	cv, err = s.ChartVersion(ctx, "apps", "web", "2.0.0")
	must(t, err)
	if cv.HeldUntil != nil {
		t.Fatalf("released version: HeldUntil = %v, want nil", cv.HeldUntil)
	}
	wantStrings(t, "ChartVersions after release", list(chartctl.ChartFilter{}), []string{"web@2.0.0", "web@1.0.0"})
	e, err := s.IndexEntry(ctx, "apps", "web", "2.0.0")
	must(t, err)
	if string(e.IndexEntry) != "name: web\nversion: 2.0.0\n" || string(e.IndexEntryJSON) != `{"name":"web","version":"2.0.0"}` {
		t.Fatalf("index entry after release = %q, JSON %q", e.IndexEntry, e.IndexEntryJSON)
	}
	tags, _, err = s.ChartTags(ctx, "apps", "web", "", -1)
	must(t, err)
	wantStrings(t, "ChartTags after release", tags, []string{"1.0.0", "2.0.0"})
	// A released version is not expired.
	_, _, err = s.ExpireHeldChartVersion(ctx, "apps", "web", "2.0.0", until.Add(time.Hour))
	wantCode(t, err, chartctl.ECONFLICT)

	// Expiry: not before the deadline; then the version alone goes.
	_, _, err = s.ExpireHeldChartVersion(ctx, "apps", "lonely", "0.1.0", until.Add(-time.Second))
	wantCode(t, err, chartctl.ECONFLICT)
	gone, orphans, err := s.ExpireHeldChartVersion(ctx, "apps", "lonely", "0.1.0", until)
	must(t, err)
	if gone.Name != "lonely" || len(orphans) != 1 || orphans[0] != alone.Digest {
		t.Fatalf("ExpireHeldChartVersion = %s@%s, orphans %q; want lonely@0.1.0 and its archive", gone.Name, gone.Version, orphans)
	}
	_, err = s.ChartVersion(ctx, "apps", "lonely", "0.1.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, _, err = s.ExpireHeldChartVersion(ctx, "apps", "lonely", "0.1.0", until)
	wantCode(t, err, chartctl.ENOTFOUND)
	due, err = s.HeldChartVersions(ctx, until.Add(time.Hour))
	must(t, err)
	wantStrings(t, "HeldChartVersions after release and expiry", versionsOf(due), nil)
	wantStrings(t, "ChartVersions at the end", list(chartctl.ChartFilter{IncludeHeld: true}), []string{"web@2.0.0", "web@1.0.0"})
	others, err := s.ChartVersions(ctx, "other", chartctl.ChartFilter{})
	must(t, err)
	wantStrings(t, "other repository", versionsOf(others), []string{"web@2.0.0"})

	// A held version goes with its repository.
	again := chart("other", "web", "3.0.0")
	again.HeldUntil = &until
	mustPut(t, s, again)
	_, err = s.DeleteRepository(ctx, "other")
	must(t, err)
	due, err = s.HeldChartVersions(ctx, until)
	must(t, err)
	wantStrings(t, "HeldChartVersions after the repository's deletion", versionsOf(due), nil)
}
