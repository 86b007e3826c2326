package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/storetest"
)

// indexEvents records what WatchIndex tells a replica.
type indexEvents struct {
	mu     sync.Mutex
	events []string
}

func (e *indexEvents) RefreshIndexVersion(_ context.Context, repo, name, version string) {
	e.add(fmt.Sprintf("refresh %s %s %s", repo, name, version))
}

func (e *indexEvents) InvalidateIndex(repo string) { e.add("invalidate " + repo) }

func (e *indexEvents) InvalidateCredentials() { e.add("credentials") }

func (e *indexEvents) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, s)
}

// wait waits until event was recorded, failing after a bound far above
// the watcher's poll (no timing is asserted).
func (e *indexEvents) wait(t *testing.T, event string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(10 * time.Millisecond) {
		e.mu.Lock()
		ok := slices.Contains(e.events, event)
		e.mu.Unlock()
		if ok {
			return
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t.Fatalf("no %q among %q", event, e.events)
}

func (e *indexEvents) has(event string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.events, event)
}

// TestWatchIndex: a replica hears of the chart changes another commits
// (not of its own), and when its listening connection is killed it still
// learns of the changes it missed, through the generation check.
func TestWatchIndex(t *testing.T) {
	url, dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
	if err := b.CreateRepository(ctx, &chartctl.Repository{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	var ea, eb indexEvents
	wctx, cancel := context.WithCancel(ctx)
	// A poll long enough that a notification arrives before two polls
	// miss it even on a loaded machine (CI saw "invalidate" at 50 ms):
	// which of the two a replica hears is what this test checks.
	doneA := a.WatchIndex(wctx, &ea, 500*time.Millisecond)
	doneB := b.WatchIndex(wctx, &eb, 500*time.Millisecond)
	defer func() { cancel(); <-doneA; <-doneB }()

	put := func(db *postgres.DB, version string) {
		cv := &chartctl.ChartVersion{Repository: "r", Name: "web", Version: version, Digest: storetest.Digest(version)}
		if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(b, "1.0.0")
	ea.wait(t, "refresh r web 1.0.0")
	if _, _, err := b.DeleteChartVersion(ctx, "r", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	ea.wait(t, "refresh r web 1.0.0") // the deletion is a refresh too
	put(a, "1.1.0")
	ea.wait(t, "refresh r web 1.0.0")
	eb.wait(t, "refresh r web 1.1.0")
	if ea.has("refresh r web 1.1.0") || ea.has("invalidate r") {
		t.Fatalf("a replica was told of its own change: %q", ea.events)
	}

	// A key revoked on b: a drops its cached credentials.
	u := &chartctl.User{Email: "ada@example.com"}
	if err := b.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	k := &chartctl.APIKey{UserID: u.ID, Name: "ci", Hash: []byte("h")}
	if err := b.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteAPIKey(ctx, u.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	ea.wait(t, "credentials")
	if eb.has("credentials") {
		t.Fatal("a replica was told of its own revocation")
	}

	// Kill a's listening connection; a change made meanwhile still
	// reaches a.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'chartctl-index-listener' AND datname = current_database()`).Scan(&killed); err != nil || killed != 2 {
		t.Fatalf("terminated %d listeners (%v), want 2", killed, err)
	}
	put(b, "2.0.0")
	for start := time.Now(); !ea.has("refresh r web 2.0.0") && !ea.has("invalidate r"); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("replica a never learnt of the change made while its listener was down: %q", ea.events)
		}
	}

	// A change whose notification is lost altogether (here the generation
	// raised behind the stores' back) is caught by the generation check.
	if _, err := conn.Exec(ctx, `UPDATE repositories SET generation = generation + 1 WHERE name = 'r'`); err != nil {
		t.Fatal(err)
	}
	ea.wait(t, "invalidate r")
	eb.wait(t, "invalidate r")

	// A deleted repository is invalidated everywhere else.
	ea.mu.Lock()
	ea.events = nil
	ea.mu.Unlock()
	if _, err := b.DeleteRepository(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	ea.wait(t, "invalidate r")
}

// TestListingSeesOtherReplicas: a replica's sorted version keys (kept per
// repository generation) never hide a change another replica committed.
func TestListingSeesOtherReplicas(t *testing.T) {
	_, dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
	if err := a.CreateRepository(ctx, &chartctl.Repository{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		cvs, total, err := a.ChartVersionPage(ctx, "r", chartctl.ChartFilter{}, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cv := range cvs {
			out = append(out, cv.Version)
		}
		if total != len(out) {
			t.Fatalf("total %d for %v", total, out)
		}
		return out
	}
	for _, step := range []struct {
		do   func()
		want []string
	}{
		{func() {}, nil},
		{func() { put(t, b, "1.0.0") }, []string{"1.0.0"}},
		{func() { put(t, b, "2.0.0") }, []string{"2.0.0", "1.0.0"}},
		{func() {
			if _, _, err := b.DeleteChartVersion(ctx, "r", "web", "2.0.0"); err != nil {
				t.Fatal(err)
			}
		}, []string{"1.0.0"}},
		{func() {
			if _, err := b.DeleteRepository(ctx, "r"); err != nil {
				t.Fatal(err)
			}
			if err := b.CreateRepository(ctx, &chartctl.Repository{Name: "r"}); err != nil {
				t.Fatal(err)
			}
		}, nil},
	} {
		step.do()
		if got := list(); !slices.Equal(got, step.want) {
			t.Fatalf("a lists %v, want %v", got, step.want)
		}
	}
}

func put(t *testing.T, db *postgres.DB, version string) {
	t.Helper()
	cv := &chartctl.ChartVersion{Repository: "r", Name: "web", Version: version, Digest: storetest.Digest(version)}
	if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
}
