// Package epochmemo keeps answers of a store's reads, each with the
// store's write epoch read before it was found, and gives an answer back
// only while the epoch is the same.
//
// A store raises its epoch after each write is durable (bolt: every
// commit to its file; PostgreSQL: every write of this process and every
// poll for other replicas while alone, and with other replicas the
// sequence every replica's writes move, internal/postgres). While
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

import (
	"strings"
	"sync"
)

// The bounds the stores' memos use: 4,096 answers, 16 MiB of answers in
// all, none over 64 KiB (a manifest may be megabytes; chart manifests
// and pages of 100 tags are under a few KiB).
const (
	DefaultEntries   = 4096
	DefaultBytes     = 16 << 20
	DefaultMaxAnswer = 64 << 10
)

// Key is a memo's key: comparable, and able to give a copy of itself
// that holds no part of a request, for the memo to keep.
type Key[K any] interface {
	comparable
	Owned() K
}

// Memo is one read's memo. The zero Memo keeps nothing until New's bounds
// are set; use New.
type Memo[K Key[K], V any] struct {
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
func New[K Key[K], V any](maxEntries, maxBytes, maxOne int, sizeOf func(*V) int) *Memo[K, V] {
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

// Put keeps v, found for k by a read begun at epoch, under k.Owned(),
// unless it is larger than the memo's largest answer. v is shared from
// then on.
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
	cm.m[k.Owned()] = entry[V]{epoch: epoch, v: v}
	cm.size += n
}

// Answer returns the answer kept for k at epoch, or else load's, which it
// keeps (Put) unless load fails.
func (cm *Memo[K, V]) Answer(k K, epoch uint64, load func() (*V, error)) (*V, error) {
	if v, ok := cm.Get(k, epoch); ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	cm.Put(k, epoch, v)
	return v, nil
}

// NameKey is a key of two names: a repository's and a tag's or digest's.
type NameKey struct{ Name, Ref string }

// Owned returns k with copies of its names.
func (k NameKey) Owned() NameKey { return NameKey{strings.Clone(k.Name), strings.Clone(k.Ref)} }
