package bolt

import (
	"bytes"
	"sync"
)

// manifests is the memo of decoded OCI manifest records: a manifest GET
// reads its record on every request, and decoding its JSON was more than half of
// the CPU such a request cost (a profile of `chartctl serve` under 16
// connections of manifest GETs, issue #32). An entry keeps the bytes it
// was decoded from and is used only when the stored record has exactly
// those bytes, so a changed, deleted or re-created record is never
// answered from it and nothing needs invalidating; that also makes one
// memo safe for every DB of the process.
var manifests = manifestMemo{m: map[string]memoEntry{}}

// manifestMemoMax bounds the memo; past it the memo starts over.
const manifestMemoMax = 4096

type manifestMemo struct {
	mu sync.RWMutex
	m  map[string]memoEntry
}

type memoEntry struct {
	raw []byte
	rec ociManifestRecord
}

// decode returns the record stored under k as v, from the memo when v is
// the bytes it was decoded from. The record's maps and slices are shared
// with the memo: callers copy them (domain does).
func (mm *manifestMemo) decode(k, v []byte) (*ociManifestRecord, error) {
	mm.mu.RLock()
	e, ok := mm.m[string(k)]
	mm.mu.RUnlock()
	if ok && bytes.Equal(e.raw, v) {
		r := e.rec
		return &r, nil
	}
	r, err := decode[ociManifestRecord](v)
	if err != nil {
		return nil, err
	}
	mm.mu.Lock()
	if len(mm.m) >= manifestMemoMax {
		mm.m = map[string]memoEntry{}
	}
	mm.m[string(k)] = memoEntry{raw: bytes.Clone(v), rec: *r}
	mm.mu.Unlock()
	return r, nil
}
