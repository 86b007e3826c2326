package bolt

import (
	"bytes"
	"sync"
)

// taggedMemo keeps TaggedManifest's answers, each with the ID of the
// read transaction it was found in. bbolt gives every committed write
// transaction the next ID, and a read transaction the ID of the last
// commit, so two reads whose transactions have the same ID see the same
// file: an entry is used only by a read of that ID, and nothing needs
// invalidating. After any write the entries are stale and are replaced as
// tags are read again. The memo belongs to one DB (IDs of two files say
// nothing of each other). The zero value is ready for use.
type taggedMemo struct {
	mu sync.RWMutex
	m  map[string]taggedEntry
	// size is the total of the entries' content.
	size int
}

type taggedEntry struct {
	txid    int
	rec     *ociManifestRecord
	content []byte
}

// The memo's bounds: past taggedMemoMax entries or taggedMemoBytes of
// content it starts over. A manifest may be megabytes (the registry takes
// up to 4 MiB); one of more than taggedMemoMaxContent is not kept, and
// its reads go to the file every time (chart manifests are under 1 KiB).
const (
	taggedMemoMax        = 4096
	taggedMemoBytes      = 16 << 20
	taggedMemoMaxContent = 64 << 10
)

// get returns the record and content kept for key k (name and tag) as
// read in a transaction of ID txid. The record's maps and slices are
// shared: callers copy them (domain does).
func (tm *taggedMemo) get(k []byte, txid int) (*ociManifestRecord, []byte, bool) {
	tm.mu.RLock()
	e, ok := tm.m[string(k)]
	tm.mu.RUnlock()
	if !ok || e.txid != txid {
		return nil, nil, false
	}
	return e.rec, e.content, true
}

// put keeps rec and a copy of content, read for key k in a transaction of
// ID txid, unless content is larger than taggedMemoMaxContent.
func (tm *taggedMemo) put(k []byte, txid int, rec *ociManifestRecord, content []byte) {
	if len(content) > taggedMemoMaxContent {
		return
	}
	r := *rec
	tm.mu.Lock()
	if old, ok := tm.m[string(k)]; ok {
		tm.size -= len(old.content)
	}
	if tm.m == nil || len(tm.m) >= taggedMemoMax || tm.size+len(content) > taggedMemoBytes {
		tm.m, tm.size = map[string]taggedEntry{}, 0
	}
	tm.m[string(k)] = taggedEntry{txid: txid, rec: &r, content: bytes.Clone(content)}
	tm.size += len(content)
	tm.mu.Unlock()
}
