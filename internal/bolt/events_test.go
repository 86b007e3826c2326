package bolt_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestChangeCommitsWithItsMutation: a Change rides in the transaction of
// the store call whose context carries it: written when the call commits,
// with a delivery queued for each webhook that wants the event, and not at
// all when the call fails.
func TestChangeCommitsWithItsMutation(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "chartctl.db"))
	ctx := context.Background()
	wantAll := &chartctl.Webhook{URL: "https://a.example.com", Events: []string{"*"}, Active: true}
	wantRepo := &chartctl.Webhook{Repository: "other", URL: "https://b.example.com", Events: []string{"*"}, Active: true}
	// A repository webhook needs its repository.
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*chartctl.Webhook{wantAll, wantRepo} {
		if err := db.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	change := func(id string) context.Context {
		return chartctl.WithChange(ctx, &chartctl.Change{
			Audit:  []*chartctl.AuditEntry{{Action: "repository.create", Target: "apps", Outcome: chartctl.OutcomeSuccess}},
			Events: []*chartctl.Event{{ID: id, Type: chartctl.EventRepositoryCreated, Repository: "apps"}},
		})
	}
	if err := db.CreateRepository(change("evt_1"), &chartctl.Repository{Name: "apps"}); err != nil {
		t.Fatal(err)
	}
	// The same name again fails: neither its entry nor its event is kept.
	if err := db.CreateRepository(change("evt_2"), &chartctl.Repository{Name: "apps"}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("err = %v", err)
	}
	entries, _, err := db.AuditLog(ctx, chartctl.AuditFilter{})
	if err != nil || len(entries) != 1 || entries[0].Action != "repository.create" {
		t.Fatalf("audit %v %+v", err, entries)
	}
	all, err := db.Deliveries(ctx, wantAll.ID, 0)
	if err != nil || len(all) != 1 || all[0].Event.ID != "evt_1" || all[0].State != chartctl.DeliveryPending {
		t.Fatalf("server-wide webhook deliveries %v %+v", err, all)
	}
	other, err := db.Deliveries(ctx, wantRepo.ID, 0)
	if err != nil || len(other) != 0 {
		t.Fatalf("another repository's webhook got %+v", other)
	}
}

// TestPruneAudit deletes entries older than the cut-off and keeps the
// rest, whose cursor pagination is unaffected.
func TestPruneAudit(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "chartctl.db"))
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if err := db.AppendAudit(ctx, &chartctl.AuditEntry{Time: testTime.AddDate(0, 0, i), Action: "chart.push", Outcome: chartctl.OutcomeSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.PruneAudit(ctx, testTime.AddDate(0, 0, 3))
	if err != nil || n != 3 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	left, next, err := db.AuditLog(ctx, chartctl.AuditFilter{Limit: 1})
	if err != nil || len(left) != 1 || next == "" || !left[0].Time.Equal(testTime.AddDate(0, 0, 4)) {
		t.Fatalf("left %+v next %q %v", left, next, err)
	}
	rest, next, err := db.AuditLog(ctx, chartctl.AuditFilter{Limit: 1, Cursor: next})
	if err != nil || len(rest) != 1 || next != "" || !rest[0].Time.Equal(testTime.AddDate(0, 0, 3)) {
		t.Fatalf("rest %+v next %q %v", rest, next, err)
	}
}
