package app

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestScheduledRetentionRunsWhenDue: a policy runs when its cron schedule
// has a time in the interval checked, not otherwise, and its deletions are
// audited.
func TestScheduledRetentionRunsWhenDue(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	a := New(db, blobs, Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "apps"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		cv := &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: fmt.Sprintf("1.%d.0", i), Digest: fmt.Sprintf("sha256:%064x", i), Size: 10,
			Metadata: []byte(`{"name":"web"}`)}
		if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	one := 1
	if err := db.SetRetentionPolicy(ctx, "apps", &chartctl.RetentionPolicy{KeepLatest: &one, Schedule: "5 10 * * *"}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		cvs, err := db.ChartVersions(ctx, "apps", chartctl.ChartFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(cvs)
	}
	a.runDue(ctx, now, now.Add(4*time.Minute))
	if n := count(); n != 3 {
		t.Fatalf("ran before its time: %d left", n)
	}
	a.runDue(ctx, now.Add(4*time.Minute), now.Add(5*time.Minute))
	if n := count(); n != 1 {
		t.Fatalf("scheduled run left %d versions", n)
	}
	entries, _, err := db.AuditLog(ctx, chartctl.AuditFilter{Action: "chart.delete"})
	if err != nil || len(entries) != 2 {
		t.Fatalf("audit %v %+v", err, entries)
	}
	runs, _, err := db.AuditLog(ctx, chartctl.AuditFilter{Action: "retention.run"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("run audit %v %+v", err, runs)
	}
}
