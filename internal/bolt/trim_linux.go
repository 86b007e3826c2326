package bolt

import (
	"go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// trimMapped drops the process's mappings of the database file's pages,
// up to tx's size, keeping them in the page cache. The mapping is
// read-only and bbolt writes with pwrite, so nothing is lost: a later
// read maps the page again from the cache. tx keeps the mapping in place.
func trimMapped(tx *bbolt.Tx) {
	info := tx.DB().Info()
	// By address, not a slice over the mapping: bbolt owns it.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, info.Data, uintptr(tx.Size()), unix.MADV_DONTNEED)
}
