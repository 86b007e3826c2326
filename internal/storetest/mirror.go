package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testMirrors checks mirror repositories: their settings and sync state
// are stored with the repository and read back by every read of it, the
// settings change only on a mirror, and a sync's state is recorded only on
// the repository it ran for.
func testMirrors(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	plain := mustRepo(t, s, "plain", "")
	if plain.Mirror != nil {
		t.Fatalf("an ordinary repository reads back as a mirror: %+v", plain.Mirror)
	}
	got, err := s.Repository(ctx, "plain")
	must(t, err)
	if got.Mirror != nil {
		t.Fatalf("an ordinary repository reads back as a mirror: %+v", got.Mirror)
	}

	sealed := []byte{0, 1, 2, 0xff, 'x'}
	m := &chartctl.Repository{Name: "upstream", OwnerID: ada.ID, Mirror: &chartctl.Mirror{
		MirrorSettings: chartctl.MirrorSettings{URL: "https://charts.example.com/stable", Interval: 90 * time.Minute, Username: "reader", Password: sealed},
		MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorSyncing},
	}}
	must(t, s.CreateRepository(ctx, m))
	want := chartctl.Mirror{MirrorSettings: m.Mirror.MirrorSettings, MirrorState: chartctl.MirrorState{Status: chartctl.MirrorSyncing}}
	wantMirror(t, "created", s, "upstream", want)
	repos, err := s.Repositories(ctx)
	must(t, err)
	for _, r := range repos {
		if (r.Name == "upstream") != (r.Mirror != nil) {
			t.Fatalf("Repositories: %s has mirror %+v", r.Name, r.Mirror)
		}
	}

	// A sync's state, with the times to the microsecond.
	synced, attempted := base.Add(time.Hour), base.Add(2*time.Hour)
	st := chartctl.MirrorState{Status: chartctl.MirrorError, LastSyncAt: &synced, LastAttemptAt: &attempted,
		Error: "https://charts.example.com/stable/index.yaml answered 503 Service Unavailable"}
	must(t, s.SetMirrorState(ctx, "upstream", m.ID, st))
	want.MirrorState = st
	wantMirror(t, "after SetMirrorState", s, "upstream", want)
	// Not for another repository of that name, an ordinary one, or none.
	wantCode(t, s.SetMirrorState(ctx, "upstream", "repo_other", chartctl.MirrorState{Status: chartctl.MirrorOK}), chartctl.ENOTFOUND)
	wantCode(t, s.SetMirrorState(ctx, "plain", plain.ID, chartctl.MirrorState{Status: chartctl.MirrorOK}), chartctl.ENOTFOUND)
	wantCode(t, s.SetMirrorState(ctx, "missing", m.ID, chartctl.MirrorState{Status: chartctl.MirrorOK}), chartctl.ENOTFOUND)
	wantMirror(t, "after refused SetMirrorState", s, "upstream", want)

	// New settings keep the state; without a password none is kept.
	settings := chartctl.MirrorSettings{URL: "https://mirror.example.org/charts", Interval: 24 * time.Hour}
	ctxAudit := withChange("repository.update", "upstream", "", "", "")
	r, err := s.UpdateMirror(ctxAudit, "upstream", settings)
	must(t, err)
	want.MirrorSettings = settings
	if r.Mirror == nil || r.Mirror.URL != settings.URL || r.Mirror.Password != nil {
		t.Fatalf("UpdateMirror returned %+v", r.Mirror)
	}
	wantMirror(t, "after UpdateMirror", s, "upstream", want)
	if acts := auditActions(t, s); len(acts) != 1 || acts[0] != "repository.update" {
		t.Fatalf("UpdateMirror wrote audit %v, want its change", acts)
	}
	_, err = s.UpdateMirror(ctx, "plain", settings)
	wantCode(t, err, chartctl.EINVALID)
	_, err = s.UpdateMirror(ctx, "missing", settings)
	wantCode(t, err, chartctl.ENOTFOUND)
	if got, err := s.Repository(ctx, "plain"); err != nil || got.Mirror != nil {
		t.Fatalf("refused UpdateMirror made plain %+v, %v", got, err)
	}

	// Changing description and visibility leaves the mirror as it is.
	desc, vis := "Mirrored charts", chartctl.VisibilityPublic
	r, err = s.UpdateRepository(ctx, "upstream", chartctl.RepositoryUpdate{Description: &desc, Visibility: &vis})
	must(t, err)
	if r.Mirror == nil || r.Mirror.URL != settings.URL {
		t.Fatalf("UpdateRepository returned mirror %+v", r.Mirror)
	}
	wantMirror(t, "after UpdateRepository", s, "upstream", want)

	// Deleted and re-created under its name as an ordinary repository,
	// it is no mirror, and the old sync's state finds nothing.
	_, err = s.DeleteRepository(ctx, "upstream")
	must(t, err)
	again := &chartctl.Repository{Name: "upstream", OwnerID: ada.ID}
	must(t, s.CreateRepository(ctx, again))
	wantCode(t, s.SetMirrorState(ctx, "upstream", m.ID, chartctl.MirrorState{Status: chartctl.MirrorOK}), chartctl.ENOTFOUND)
	if got, err := s.Repository(ctx, "upstream"); err != nil || got.Mirror != nil {
		t.Fatalf("re-created repository = %+v, %v", got, err)
	}
}

func wantMirror(tb testing.TB, what string, s Store, name string, want chartctl.Mirror) {
	tb.Helper()
	r, err := s.Repository(ctx, name)
	must(tb, err)
	got := r.Mirror
	if got == nil {
		tb.Fatalf("%s: %s is not a mirror", what, name)
	}
	sameOpt := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || sameTime(*a, *b)) }
	if got.URL != want.URL || got.Interval != want.Interval || got.Username != want.Username || !bytes.Equal(got.Password, want.Password) ||
		(got.Password == nil) != (want.Password == nil) || got.Status != want.Status || got.Error != want.Error ||
		!sameOpt(got.LastSyncAt, want.LastSyncAt) || !sameOpt(got.LastAttemptAt, want.LastAttemptAt) {
		tb.Fatalf("%s: mirror = %+v, want %+v", what, *got, want)
	}
	for _, p := range []*time.Time{got.LastSyncAt, got.LastAttemptAt} {
		if p != nil && p.Location() != time.UTC {
			tb.Fatalf("%s: time %v is not in UTC", what, *p)
		}
	}
}
