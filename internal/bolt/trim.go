package bolt

import (
	"sync"
	"time"

	"go.etcd.io/bbolt"
)

// bbolt reads the database through a shared, read-only memory map of the
// file. Every page a transaction reads stays mapped into the process
// afterwards, so the resident memory of a server grows towards the size
// of its database file (1.1 GB at 100,000 chart versions) although those
// pages are the kernel's page cache, shared with the file and reclaimed
// under pressure: a fill of 100,000 versions left 691 MiB of the file
// mapped (issue #32). The trimmer drops the process's mappings of the
// file's pages every trimEvery (madvise MADV_DONTNEED, trim_linux.go):
// the page cache keeps them, and the next read of a page maps it again
// with a minor fault. Resident memory then counts what the process holds
// plus the pages read since the last trim.
//
// It runs inside a read transaction, which keeps bbolt from replacing the
// mapping meanwhile, and skips databases under trimMin.

// trimEvery is how often the mapped pages are dropped. A trim of the
// 1.2 GB file of 100,000 versions takes 0.6 ms with nothing resident and
// about 0.1 ms per resident MiB (101 ms for 884 MiB, measured here), and
// the pages read again after it (the trees' roots and branches, the
// working set) a minor fault each; what stays mapped between trims is
// what the last interval read (a 100,000-version fill at 120 uploads/s:
// about 280 MiB in 10 s).
const trimEvery = 2 * time.Second

// trimMin is the smallest database the trimmer trims.
const trimMin = 32 << 20

// trimmer runs trimMapped until Close.
type trimmer struct {
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
}

// startTrimmer starts the trimmer of bdb.
func startTrimmer(bdb *bbolt.DB) *trimmer {
	t := &trimmer{stop: make(chan struct{})}
	t.done.Go(func() {
		tick := time.NewTicker(trimEvery)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				_ = bdb.View(func(tx *bbolt.Tx) error {
					if tx.Size() >= trimMin {
						trimMapped(tx)
					}
					return nil
				})
			}
		}
	})
	return t
}

// close stops the trimmer and waits for it; later calls do nothing.
func (t *trimmer) close() {
	if t == nil {
		return
	}
	t.once.Do(func() { close(t.stop) })
	t.done.Wait()
}
