package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// lastTxID is the ID of db's last committed write transaction.
func lastTxID(t *testing.T, db *DB) int {
	t.Helper()
	var id int
	if err := db.db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestClaimCommitsOnlyToClaim: the replicator asks for due tasks after
// every change, and a bbolt commit syncs the file twice even when it
// writes nothing, so a claim that finds nothing due must not commit.
func TestClaimCommitsOnlyToClaim(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	claim := func(at time.Time) (claimed int, committed bool) {
		t.Helper()
		before := lastTxID(t, db)
		tasks, err := db.ClaimReplicationTasks(ctx, at, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(tasks), lastTxID(t, db) != before
	}
	if n, committed := claim(now); n != 0 || committed {
		t.Fatalf("no replications: claimed %d, committed %v", n, committed)
	}
	if err := db.db.Update(func(tx *bbolt.Tx) error {
		if err := putReplication(tx, &replicationRecord{ID: "rpl_1", Name: "dr", Source: "charts", Target: "oci://x/y"}); err != nil {
			return err
		}
		return putReplicationTask(tx, &replicationTaskRecord{ID: "rtk_1", ReplicationID: "rpl_1", Seq: 1, Op: "push",
			Chart: "web", Version: "1.0.0", NextAttemptAt: now.Add(time.Second), CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	if n, committed := claim(now); n != 0 || committed {
		t.Fatalf("a task not yet due: claimed %d, committed %v", n, committed)
	}
	if n, committed := claim(now.Add(time.Second)); n != 1 || !committed {
		t.Fatalf("a due task: claimed %d, committed %v", n, committed)
	}
	if n, committed := claim(now.Add(time.Second)); n != 0 || committed {
		t.Fatalf("the claimed task, within its lease: claimed %d, committed %v", n, committed)
	}
}
