package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// (The package's TestMain, in replicas_test.go, stops the shared
// PostgreSQL.)

// TestScheduledRetentionOnceAcrossReplicas: two App instances on one real
// PostgreSQL database (two replicas) check the same due schedule at the
// same time, and again afterwards; the run happens once — one
// retention.run audit entry, each deletion once — and a lease held by a
// third holder keeps both from running until it is released.
func TestScheduledRetentionOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	blobDir := filepath.Join(t.TempDir(), "blobs")
	now := time.Date(2026, 5, 1, 10, 5, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	replica := func() *App {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		blobs, err := blob.Open(blobDir)
		if err != nil {
			t.Fatal(err)
		}
		return New(db, blobs, Options{Now: clock})
	}
	a1, a2 := replica(), replica()
	db := a1.Store
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "apps"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		cv := &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: fmt.Sprintf("1.%d.0", i), Digest: fmt.Sprintf("sha256:%064x", i), Size: 10,
			Metadata: []byte(`{"name":"web"}`), CreatedAt: now.Add(-time.Hour)}
		if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	one := 1
	if err := db.SetRetentionPolicy(ctx, "apps", &chartctl.RetentionPolicy{KeepLatest: &one, Schedule: "5 10 * * *"}); err != nil {
		t.Fatal(err)
	}
	count := func(action string) int {
		entries, _, err := db.AuditLog(ctx, chartctl.AuditFilter{Action: action, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	versions := func() int {
		cvs, err := db.ChartVersions(ctx, "apps", chartctl.ChartFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(cvs)
	}
	from := now.Add(-time.Minute) // the previous check, before 10:05

	// A lease someone else holds: neither replica runs.
	if ok, err := db.AcquireLease(ctx, "retention/apps", "elsewhere", time.Hour); err != nil || !ok {
		t.Fatalf("take lease: %v %v", ok, err)
	}
	a1.runDue(ctx, from, now)
	a2.runDue(ctx, from, now)
	if n := versions(); n != 4 || count("retention.run") != 0 {
		t.Fatalf("ran under another holder's lease: %d versions left, %d runs", n, count("retention.run"))
	}
	if err := db.ReleaseLease(ctx, "retention/apps", "elsewhere"); err != nil {
		t.Fatal(err)
	}

	// Both replicas check the same window at once.
	var wg sync.WaitGroup
	for _, a := range []*App{a1, a2} {
		wg.Add(1)
		go func() { defer wg.Done(); a.runDue(ctx, from, now) }()
	}
	wg.Wait()
	// And again one after the other, as replicas whose checks straddle
	// the other's run would.
	a2.runDue(ctx, from, now)
	a1.runDue(ctx, from, now)

	if n := versions(); n != 1 {
		t.Fatalf("%d versions left, want 1", n)
	}
	if n := count("retention.run"); n != 1 {
		t.Fatalf("%d retention.run entries, want 1", n)
	}
	if n := count("chart.delete"); n != 3 {
		t.Fatalf("%d chart.delete entries, want 3", n)
	}
	all, err := db.RetentionPolicies(ctx)
	if err != nil || !all["apps"].LastRun.Equal(now) {
		t.Fatalf("last run %v %v", all["apps"], err)
	}

	// The next day's time is due again, once.
	now = now.Add(24 * time.Hour)
	if _, _, _, err := db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: "2.0.0",
		Digest: fmt.Sprintf("sha256:%064x", 9), Size: 10, Metadata: []byte(`{"name":"web"}`), CreatedAt: now}, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	a2.runDue(ctx, now.Add(-time.Minute), now)
	a1.runDue(ctx, now.Add(-time.Minute), now)
	if n, runs := versions(), count("retention.run"); n != 1 || runs != 2 {
		t.Fatalf("next day: %d versions, %d runs", n, runs)
	}
}

// TestRetentionDue: a schedule is due when one of its times passed since
// the last run (or, never run, since the previous check).
func TestRetentionDue(t *testing.T) {
	sched, err := cron.ParseStandard("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	at := func(d, h, m int) time.Time { return time.Date(2026, 5, d, h, m, 0, 0, time.UTC) }
	for _, tt := range []struct {
		last, from, now time.Time
		want            bool
	}{
		{time.Time{}, at(1, 2, 59), at(1, 3, 0), true},
		{time.Time{}, at(1, 3, 0), at(1, 3, 1), false},
		{at(1, 3, 0), at(1, 3, 0), at(1, 3, 1), false},
		{at(1, 3, 0), at(2, 2, 0), at(2, 2, 1), false},
		// Every replica was down at 03:00 on the 2nd: the next check runs it.
		{at(1, 3, 0), at(2, 9, 0), at(2, 9, 1), true},
	} {
		if got := retentionDue(sched, tt.last, tt.from, tt.now); got != tt.want {
			t.Errorf("retentionDue(last %v, from %v, now %v) = %v", tt.last, tt.from, tt.now, got)
		}
	}
}
