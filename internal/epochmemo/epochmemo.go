// Package epochmemo keeps answers of a store's reads, each with the
// store's write epoch read before it was found, and gives an answer back
// only while the epoch is the same.
//
// A store raises its epoch after each write is durable (bolt: every
// commit to its file; PostgreSQL: every committed write of this process,
// and every change it hears of or polls for from other replicas). While
// the epoch is the same, the answer is what the read would find again, so
// a read needs no transaction, no lookup and no copy. After any write the
// entries are stale and are replaced as they are read again: nothing
// needs invalidating. The answers are shared by every read that finds
// them: no one may modify them.
//
// An answer found after a write but before the epoch moved is kept under
// the older epoch: it is newer than its epoch says, never older, and is
// not used once the epoch moves on.
package epochmemo

import "sync"

// Memo is one read's memo. The zero Memo keeps nothing until New's bounds
// are set; use New.
type Memo[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]entry[V]
	// size is the total of the entries' sizes (sizeOf).
	size int
	// maxEntries and maxBytes bound the memo: past either it starts over.
	// An answer larger than maxOne is not kept.
	maxEntries, maxBytes, maxOne int
	// sizeOf is an answer's size in bytes, for the bounds; nil counts 0.
	sizeOf func(*V) int
}

type entry[V any] struct {
	epoch uint64
	v     *V
}

// New returns a memo of at most maxEntries answers; with sizeOf, of at
// most maxBytes in all and none larger than maxOne.
func New[K comparable, V any](maxEntries, maxBytes, maxOne int, sizeOf func(*V) int) *Memo[K, V] {
	return &Memo[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, maxOne: maxOne, sizeOf: sizeOf}
}

// Get returns the answer kept for k as found at epoch.
func (cm *Memo[K, V]) Get(k K, epoch uint64) (*V, bool) {
	cm.mu.RLock()
	e, ok := cm.m[k]
	cm.mu.RUnlock()
	if !ok || e.epoch != epoch {
		return nil, false
	}
	return e.v, true
}

// Put keeps v, found for k by a read begun at epoch, unless it is larger
// than the memo's largest answer. v is shared from then on. k must not
// hold parts of a request (put copies of them).
func (cm *Memo[K, V]) Put(k K, epoch uint64, v *V) {
	n := 0
	if cm.sizeOf != nil {
		n = cm.sizeOf(v)
		if n > cm.maxOne {
			return
		}
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if old, ok := cm.m[k]; ok && cm.sizeOf != nil {
		cm.size -= cm.sizeOf(old.v)
	}
	if cm.m == nil || len(cm.m) >= cm.maxEntries || (cm.sizeOf != nil && cm.size+n > cm.maxBytes) {
		cm.m, cm.size = map[K]entry[V]{}, 0
	}
	cm.m[k] = entry[V]{epoch: epoch, v: v}
	cm.size += n
}

// NameKey is a key of two names: a repository's and a tag's or digest's.
type NameKey struct{ Name, Ref string }
