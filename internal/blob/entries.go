package blob

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// maxSyncedEntries bounds syncedEntries.synced; past it the set starts
// over (which only costs directory syncs, never durability).
const maxSyncedEntries = 4096

// syncedEntries remembers the blobs whose directory entry this process
// has synced since the entry last changed, so that committing bytes that
// are stored already needs no directory sync when the entry is known to be
// on disk. That is the common case of a repeated commit: an OCI push
// commits its chart layer twice (as a blob, then as the chart version's
// archive), and clients push the same config blobs again and again.
//
// Every change of an entry (a rename into place, a delete) happens under
// mu and bumps epoch; an entry is recorded as synced only if no change of
// any entry happened between the look that preceded its directory sync and
// the end of that sync. A concurrent change therefore only means one more
// directory sync, never an acknowledgement of an entry that is not on
// disk.
type syncedEntries struct {
	mu     sync.Mutex
	epoch  uint64
	synced map[string]struct{}
}

// change runs fn, which renames a file to path or removes it, as a change
// of path's entry, and returns the epoch that follows it.
func (e *syncedEntries) change(path string, fn func() error) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.epoch++
	delete(e.synced, path)
	return e.epoch, fn()
}

// look reports whether a file is at path and, if so, whether its entry is
// known to be synced, with the epoch to pass to markSynced after syncing
// it.
func (e *syncedEntries) look(path string) (exists, synced bool, epoch uint64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, false, e.epoch, nil
	} else if err != nil {
		return false, false, e.epoch, err
	}
	_, synced = e.synced[path]
	return true, synced, e.epoch, nil
}

// markSynced records that path's entry is on disk, as a directory sync
// that began after epoch made it, unless an entry changed since.
func (e *syncedEntries) markSynced(path string, epoch uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.epoch != epoch {
		return
	}
	if e.synced == nil || len(e.synced) >= maxSyncedEntries {
		e.synced = map[string]struct{}{}
	}
	e.synced[path] = struct{}{}
}
