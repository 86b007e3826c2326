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
	url := pgtest.Shared(t).NewDatabase(t)
	db, err := Open(ctx, url) // the schema
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	// Disabled scans, so the plan chosen on an empty table is the one a
	// large table gets: the index when the predicate allows it.
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE referrers(text, text) AS `+referrersSQL); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE referrers('apps/web', 'sha256:00')`)
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
