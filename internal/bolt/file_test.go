package bolt

import (
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// TestFileCountsCommits: each way to write (Update, Batch, a writable
// Begin) counts its commit once; a read, a rolled-back write and a failed
// Update count nothing.
func TestFileCountsCommits(t *testing.T) {
	bdb, err := bbolt.Open(filepath.Join(t.TempDir(), "f.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bdb.Close() })
	f := &file{DB: bdb}
	put := func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}
	want := uint64(0)
	check := func(what string) {
		t.Helper()
		if got := f.commits.Load(); got != want {
			t.Fatalf("after %s: %d commits counted, want %d", what, got, want)
		}
	}
	if err := f.Update(put); err != nil {
		t.Fatal(err)
	}
	want++
	check("Update")
	if err := f.Batch(put); err != nil {
		t.Fatal(err)
	}
	want++
	check("Batch")
	tx, err := f.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := put(tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want++
	check("Begin(true) and Commit")

	if err := f.View(func(*bbolt.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	check("View")
	if tx, err = f.Begin(true); err != nil {
		t.Fatal(err)
	}
	_ = put(tx)
	_ = tx.Rollback()
	check("a rolled-back write")
	if err := f.Update(func(tx *bbolt.Tx) error { return errors.New("refused") }); err == nil {
		t.Fatal("a failing Update succeeded")
	}
	check("a failed Update")
}
