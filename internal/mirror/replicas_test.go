package mirror_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// TestReplicasSyncOneAtATime: two replicas on one PostgreSQL database
// (two application layers and syncers, one store, one blob directory).
// While one syncs a mirror, holding it at the upstream's index, the
// other's sync of it is refused with ErrBusy; once the first is done the
// second finds nothing to copy, and every version was pushed once.
func TestReplicasSyncOneAtATime(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	blobs, err := blob.Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	replica := func(holder string) *mirror.Syncer {
		a := app.New(db, blobs, app.Options{Config: app.Config{MaxChartSize: 10 << 20, ChartLimits: chart.DefaultLimits(), AllowPrivateUpstreams: true}})
		return mirror.New(a, nil, mirror.Options{Allow: netguard.Allowance{All: true}, Holder: holder})
	}
	one, two := replica("replica-1"), replica("replica-2")

	up := newStaticRepo(t)
	up.add(t, "alpha", "0.1.0", time.Now())
	up.add(t, "beta", "1.0.0", time.Now())
	// The upstream holds the first index request until released.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	up.mu.Lock()
	up.before = func(path string) {
		if path == "/index.yaml" {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
	}
	up.mu.Unlock()
	r := &chartctl.Repository{Name: "m", Mirror: &chartctl.Mirror{
		MirrorSettings: chartctl.MirrorSettings{URL: up.URL, Interval: time.Hour},
		MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorSyncing}}}
	if err := db.CreateRepository(ctx, r); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := one.Sync(ctx, "m")
		done <- err
	}()
	<-entered
	if _, err := two.Sync(ctx, "m"); !errors.Is(err, mirror.ErrBusy) {
		t.Fatalf("the second replica's sync while the first runs: %v", err)
	}
	two.RunDue(ctx) // due (syncing), but busy: does nothing
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	res, err := two.Sync(ctx, "m")
	if err != nil || len(res.Added) != 0 {
		t.Fatalf("the second replica's sync afterwards: %+v, %v", res, err)
	}
	pushes, _, err := db.AuditLog(ctx, chartctl.AuditFilter{Action: "chart.push", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, p := range pushes {
		targets = append(targets, p.Target)
	}
	if strings.Join(targets, " ") != "m/beta/1.0.0 m/alpha/0.1.0" {
		t.Fatalf("pushes audited: %v", targets)
	}
	got, err := db.Repository(ctx, "m")
	if err != nil || got.Mirror.Status != chartctl.MirrorOK {
		t.Fatalf("state: %+v, %v", got.Mirror, err)
	}
}
