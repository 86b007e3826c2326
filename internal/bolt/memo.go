package bolt

import (
	"bytes"
	"sync"
)

// A recordMemo holds decoded records of one kind, keyed by their bucket
// key, for the reads that decode the same record on every request (issue
// #32's profiles of `chartctl serve` under 16 connections: decoding a
// manifest record's JSON was more than half of a manifest GET's CPU). A
// read that commitMemos answer (a manifest by tag, a blob link) decodes
// only once after each write and needs no recordMemo of its own. An
// entry keeps the bytes it was decoded from and is used only when the
// stored record has exactly those bytes, so a changed, deleted or
// re-created record is never answered from it and nothing needs
// invalidating; that also makes one memo safe for every DB of the process.
type recordMemo[T any] struct {
	mu sync.RWMutex
	m  map[string]memoEntry[T]
}

type memoEntry[T any] struct {
	raw []byte
	rec T
}

// recordMemoMax bounds each memo; past it the memo starts over.
const recordMemoMax = 4096

// manifests is the memo of manifest records, decoded on every read of a
// manifest by digest and on TaggedManifest's reads after a write.
var manifests = newRecordMemo[ociManifestRecord]()

func newRecordMemo[T any]() *recordMemo[T] {
	return &recordMemo[T]{m: map[string]memoEntry[T]{}}
}

// decode returns the record stored under k as v, from the memo when v is
// the bytes it was decoded from. The record's maps and slices are shared
// with the memo: callers copy them.
func (mm *recordMemo[T]) decode(k, v []byte) (*T, error) {
	mm.mu.RLock()
	e, ok := mm.m[string(k)]
	mm.mu.RUnlock()
	if ok && bytes.Equal(e.raw, v) {
		r := e.rec
		return &r, nil
	}
	r, err := decode[T](v)
	if err != nil {
		return nil, err
	}
	mm.mu.Lock()
	if len(mm.m) >= recordMemoMax {
		mm.m = map[string]memoEntry[T]{}
	}
	mm.m[string(k)] = memoEntry[T]{raw: bytes.Clone(v), rec: *r}
	mm.mu.Unlock()
	return r, nil
}
