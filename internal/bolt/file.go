package bolt

import (
	"sync/atomic"

	"go.etcd.io/bbolt"
)

// file is a DB's bbolt file. It counts the write transactions committed
// through it, so a reader can tell that nothing changed since an answer
// was found without opening a transaction of its own (commitMemos, internal/epochmemo). Every
// write goes through Update, Batch or Begin, which add the count to the
// transaction's commit.
type file struct {
	*bbolt.DB
	commits atomic.Uint64
}

// Update is bbolt's Update, counting the commit.
func (f *file) Update(fn func(*bbolt.Tx) error) error {
	return f.DB.Update(func(tx *bbolt.Tx) error {
		tx.OnCommit(f.committed)
		return fn(tx)
	})
}

// Batch is bbolt's Batch, counting the commit.
func (f *file) Batch(fn func(*bbolt.Tx) error) error {
	return f.DB.Batch(func(tx *bbolt.Tx) error {
		tx.OnCommit(f.committed)
		return fn(tx)
	})
}

// Begin is bbolt's Begin, counting the commit of a writable transaction.
func (f *file) Begin(writable bool) (*bbolt.Tx, error) {
	tx, err := f.DB.Begin(writable)
	if err == nil && writable {
		tx.OnCommit(f.committed)
	}
	return tx, err
}

// committed counts one commit. bbolt calls it after the commit is on
// disk and before Update returns, so a write's caller never reads a
// count from before its write.
func (f *file) committed() { f.commits.Add(1) }
