package bolt_test

import (
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestUpgradeKeepsRepositoriesOrdinary: a data dir written before mirrors
// existed opens at schema 5 with every repository an ordinary one; a
// mirror created then keeps its settings and state across a reopen.
func TestUpgradeKeepsRepositoriesOrdinary(t *testing.T) {
	path, _ := copySchema1(t)
	db, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	repos, err := db.Repositories(ctx)
	if err != nil || len(repos) != 3 {
		t.Fatalf("repositories = %d, %v", len(repos), err)
	}
	for _, r := range repos {
		if r.Mirror != nil {
			t.Errorf("%s became a mirror: %+v", r.Name, r.Mirror)
		}
	}
	// Settings of an ordinary repository are refused.
	_, err = db.UpdateMirror(ctx, "public-charts", chartctl.MirrorSettings{URL: "https://charts.example.com", Interval: time.Hour})
	wantCode(t, err, chartctl.EINVALID)

	synced := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	m := &chartctl.Repository{Name: "upstream", OwnerID: repos[0].OwnerID, Mirror: &chartctl.Mirror{
		MirrorSettings: chartctl.MirrorSettings{URL: "https://charts.example.com", Interval: 30 * time.Minute, Username: "u", Password: []byte{1, 2, 3}},
		MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorSyncing},
	}}
	if err := db.CreateRepository(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMirrorState(ctx, "upstream", m.ID, chartctl.MirrorState{Status: chartctl.MirrorOK, LastSyncAt: &synced, LastAttemptAt: &synced}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, path)
	got, err := db.Repository(ctx, "upstream")
	if err != nil {
		t.Fatal(err)
	}
	if got.Mirror == nil || got.Mirror.URL != "https://charts.example.com" || got.Mirror.Interval != 30*time.Minute || got.Mirror.Username != "u" ||
		string(got.Mirror.Password) != "\x01\x02\x03" || got.Mirror.Status != chartctl.MirrorOK || !got.Mirror.LastSyncAt.Equal(synced) {
		t.Fatalf("mirror after reopen = %+v", got.Mirror)
	}
}
