package storetest

import (
	"fmt"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testListsFollowChanges: the list of a whole repository, which engines
// may keep sorted between changes, shows every version added and none
// deleted as soon as the change returns, also when a page was read just
// before; a repository deleted and created again under its name lists
// only its own versions; overwriting a version keeps the list.
func testListsFollowChanges(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "lists", "")
	list := func(f chartctl.ChartFilter, offset, limit int) string {
		t.Helper()
		cvs, total, err := s.ChartVersionPage(ctx, "lists", f, offset, limit)
		must(t, err)
		return fmt.Sprintf("%d %v", total, versionsOf(cvs))
	}
	mustPut(t, s, chart("lists", "web", "1.0.0"))
	mustPut(t, s, chart("lists", "api", "1.0.0"))
	if got := list(chartctl.ChartFilter{}, 0, 10); got != "2 [api@1.0.0 web@1.0.0]" {
		t.Fatalf("list = %s", got)
	}
	mustPut(t, s, chart("lists", "web", "2.0.0"))
	if got := list(chartctl.ChartFilter{}, 0, 10); got != "3 [api@1.0.0 web@2.0.0 web@1.0.0]" {
		t.Fatalf("after an upload: %s", got)
	}
	if got := list(chartctl.ChartFilter{Latest: true}, 0, 10); got != "2 [api@1.0.0 web@2.0.0]" {
		t.Fatalf("latest: %s", got)
	}
	// The whole list is unchanged by the latest-only view taken from it.
	if got := list(chartctl.ChartFilter{}, 1, 1); got != "3 [web@2.0.0]" {
		t.Fatalf("page 2 of 1: %s", got)
	}
	if _, _, err := s.DeleteChartVersion(ctx, "lists", "web", "2.0.0"); err != nil {
		t.Fatal(err)
	}
	if got := list(chartctl.ChartFilter{}, 0, 10); got != "2 [api@1.0.0 web@1.0.0]" {
		t.Fatalf("after a delete: %s", got)
	}
	over := chart("lists", "api", "1.0.0")
	over.Digest = Digest("another api archive")
	if _, _, _, err := s.PutChartVersion(ctx, over, chartctl.PutVersionOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got := list(chartctl.ChartFilter{}, 0, 10); got != "2 [api@1.0.0 web@1.0.0]" {
		t.Fatalf("after an overwrite: %s", got)
	}
	if cv, _ := s.ChartVersion(ctx, "lists", "api", "1.0.0"); cv == nil || cv.Digest != over.Digest {
		t.Fatalf("overwritten version: %+v", cv)
	}
	if _, err := s.DeleteRepository(ctx, "lists"); err != nil {
		t.Fatal(err)
	}
	mustRepo(t, s, "lists", "")
	mustPut(t, s, chart("lists", "db", "0.1.0"))
	if got := list(chartctl.ChartFilter{}, 0, 10); got != "1 [db@0.1.0]" {
		t.Fatalf("the repository created again: %s", got)
	}
}
