package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// TestReferrersGenericPlan: a prepared statement runs on a generic plan
// after its first executions; the referrers' must still use the partial
// index of manifests with a subject, not scan every manifest of the name.
func TestReferrersGenericPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// One transaction of the store's own pool, whose settings end with it.
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// The generic plan, and no sequential scans, so that the plan chosen
	// on an empty table is the one a large table gets: the index when
	// the predicate allows it.
	for _, stmt := range []string{
		`SET LOCAL plan_cache_mode = force_generic_plan`,
		`SET LOCAL enable_seqscan = off`,
		`PREPARE referrers(text, text) AS ` + referrersSQL,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tx.Query(ctx, `EXPLAIN EXECUTE referrers('apps/web', 'sha256:00')`)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "oci_manifests_subject") {
		t.Fatalf("the referrers' generic plan does not use oci_manifests_subject:\n%s", p)
	}
}
