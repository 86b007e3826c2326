package server_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestRetentionDryRunEqualsRun: the dry run lists exactly what the real
// run then deletes, with reasons; the pinned version survives; a recent
// download keeps a version (statistics drive keep_downloaded_within); old
// pre-releases go; every deletion is audited.
func TestRetentionDryRunEqualsRun(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Now = clk.Now })
	s.MustRepo(t, "apps", "public")
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0-rc.1", "1.4.0", "1.5.0"} {
		if r := s.Upload(t, "apps", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: v}), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", v, r.StatusCode, r.Body)
		}
		clk.Add(24 * time.Hour)
	}
	clk.Add(30 * 24 * time.Hour)
	// 1.2.0 is still in use.
	if r := s.Do(t, "GET", "/helm/apps/charts/web-1.2.0.tgz", "", nil); r.StatusCode != 200 {
		t.Fatalf("download: %d", r.StatusCode)
	}
	c := clientFor(t, s, s.AdminKey)
	ctx := t.Context()
	str := func(v string) *string { return &v }
	two := 2
	pol := &client.RetentionPolicy{KeepLatest: &two, KeepDownloadedWithin: str("7d"), KeepMatching: str("1.0.0"),
		DeletePrereleasesAfter: str("14d"), Schedule: str("0 3 * * *")}
	if _, _, err := c.Repositories.SetRetention(ctx, "apps", pol); err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Repositories.Retention(ctx, "apps")
	if err != nil || *got.KeepLatest != 2 || *got.KeepDownloadedWithin != "7d" || *got.Schedule != "0 3 * * *" || got.KeepPushedWithin != nil {
		t.Fatalf("policy %+v %v", got, err)
	}

	dry, _, err := c.Repositories.RunRetention(ctx, "apps", true)
	if err != nil || !dry.DryRun {
		t.Fatal(err, dry)
	}
	var plan []string
	for _, d := range dry.Deleted {
		plan = append(plan, d.Version+": "+d.Reason)
	}
	want := []string{
		"2.0.0-rc.1: pre-release pushed more than 14d ago",
		"1.3.0: not among the newest 2, not downloaded within 7d",
		"1.1.0: not among the newest 2, not downloaded within 7d",
	}
	if strings.Join(plan, "\n") != strings.Join(want, "\n") {
		t.Fatalf("dry run\n%s\nwant\n%s", strings.Join(plan, "\n"), strings.Join(want, "\n"))
	}
	var remaining envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/apps/charts", s.AdminKey, nil).JSON(t, &remaining)
	if len(remaining.Data) != 7 {
		t.Fatalf("a dry run deleted something: %d left", len(remaining.Data))
	}

	run, _, err := c.Repositories.RunRetention(ctx, "apps", false)
	if err != nil || run.DryRun {
		t.Fatal(err, run)
	}
	if len(run.Deleted) != len(dry.Deleted) {
		t.Fatalf("run %+v, dry run %+v", run.Deleted, dry.Deleted)
	}
	for i := range run.Deleted {
		if run.Deleted[i] != dry.Deleted[i] {
			t.Fatalf("run %+v, dry run %+v", run.Deleted, dry.Deleted)
		}
	}
	s.Do(t, "GET", "/v1/repositories/apps/charts", s.AdminKey, nil).JSON(t, &remaining)
	var left []string
	for _, ch := range remaining.Data {
		left = append(left, ch.Version)
	}
	if strings.Join(left, " ") != "1.5.0 1.4.0 1.2.0 1.0.0" {
		t.Fatalf("left %v", left)
	}
	entries, _, err := c.Audit.List(ctx, &client.AuditOptions{Action: "chart.delete"})
	if err != nil || len(entries) != 3 || entries[0].Target != "apps/web/1.1.0" {
		t.Fatalf("audit %v %+v", err, entries)
	}
	// A second run finds nothing more.
	again, _, err := c.Repositories.RunRetention(ctx, "apps", false)
	if err != nil || len(again.Deleted) != 0 {
		t.Fatalf("second run %+v %v", again, err)
	}
	expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/apps/retention", s.AdminKey, map[string]any{"keep_matching": "not a constraint"}), 400, "invalid_parameter", "keep_matching")
	expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/apps/retention", s.AdminKey, map[string]any{"schedule": "every day"}), 400, "invalid_parameter", "schedule")
	expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/apps/retention", s.AdminKey, map[string]any{"keep_pushed_within": "soon"}), 400, "invalid_parameter", "keep_pushed_within")
	// keep_latest 0 keeps nothing: on its own it would delete every version.
	for _, n := range []int{0, -1} {
		expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/apps/retention", s.AdminKey, map[string]any{"keep_latest": n}), 400, "invalid_parameter", "keep_latest")
	}
}
