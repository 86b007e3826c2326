package postgres

import (
	"sync"
	"time"
)

// Every request with a credential asks the failed-authentication
// throttle whether its address is blocked: a statement each, several
// for one `helm push`. While this replica is alone on the database (as
// the registry's memos, memo.go), nobody else records failures, so the
// answer read for an address stays right until this replica records one
// for it; the throttle's windows are then kept in memory, per address,
// and dropped whenever the replica stops being alone.

// setAlone records whether WatchIndex finds this replica alone. Each
// time it becomes alone the generation moves first, so whatever was kept
// before another replica came is dropped before it is read.
func (db *DB) setAlone(alone bool) {
	if alone && !db.alone.Load() {
		db.aloneGen.Add(1)
	}
	db.alone.Store(alone)
}

// aloneGeneration returns the current generation of being alone, and
// whether this replica is alone now (WatchIndex runs and counts no other
// replica).
func (db *DB) aloneGeneration() (uint64, bool) {
	if db.watchers.Load() == 0 || !db.alone.Load() {
		return 0, false
	}
	return db.aloneGen.Load(), true
}

// throttleWindow is what a throttle's address has used of its window.
type throttleWindow struct {
	used  int
	reset time.Time
}

// throttleMemo keeps the windows of the addresses a replica has asked
// about while alone, keyed by bucket and address.
type throttleMemo struct {
	mu      sync.Mutex
	gen     uint64
	fails   uint64 // moves at every failure recorded, so a read that raced one is not kept
	windows map[[2]string]throttleWindow
}

// throttleMemoEntries bounds the memo: past it, it starts over.
const throttleMemoEntries = 10000

// get returns the kept window of k in generation gen, and the failure
// count to pass to put after reading the database.
func (m *throttleMemo) get(gen uint64, k [2]string) (throttleWindow, bool, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen {
		m.gen, m.windows = gen, nil
	}
	w, ok := m.windows[k]
	return w, ok, m.fails
}

// put keeps w for k unless the generation moved or a failure was
// recorded since get returned fails.
func (m *throttleMemo) put(gen uint64, k [2]string, w throttleWindow, fails uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen || m.fails != fails {
		return
	}
	if m.windows == nil || len(m.windows) >= throttleMemoEntries {
		m.windows = make(map[[2]string]throttleWindow)
	}
	m.windows[k] = w
}

// failed drops k's window: a failure was recorded for it.
func (m *throttleMemo) failed(k [2]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fails++
	delete(m.windows, k)
}
