package bolt

import (
	"strings"
	"sync"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// taggedMemo keeps TaggedManifest's answers, each with the count of
// commits to the file (file.commits) read before it was found. While the
// count is the same nothing has been written, so the answer is what the
// lookups would find again; a read then needs no transaction, no bucket
// lookup and no copy. After any write the entries are stale and are
// replaced as tags are read again, so nothing needs invalidating. The
// memo belongs to one DB. The zero value is ready for use.
//
// An entry found after a commit but before its count (bbolt counts after
// the commit is on disk) is kept under the older count: it is newer than
// its count says, never older, and is not used once the count moves on.
type taggedMemo struct {
	mu sync.RWMutex
	m  map[taggedKey]taggedEntry
	// size is the total of the entries' content.
	size int
}

// taggedKey is a tag: the repository's name and the tag's.
type taggedKey struct{ name, tag string }

type taggedEntry struct {
	commits uint64
	// m is shared by every read that finds it: no one may modify it.
	m *chartctl.OCIManifest
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

// get returns the manifest kept for tag k as found when the file had had
// commits commits.
func (tm *taggedMemo) get(k taggedKey, commits uint64) (*chartctl.OCIManifest, bool) {
	tm.mu.RLock()
	e, ok := tm.m[k]
	tm.mu.RUnlock()
	if !ok || e.commits != commits {
		return nil, false
	}
	return e.m, true
}

// put keeps m, found for tag k in a transaction begun after the file had
// had commits commits, unless its content is larger than
// taggedMemoMaxContent. m is shared from then on.
func (tm *taggedMemo) put(k taggedKey, commits uint64, m *chartctl.OCIManifest) {
	if len(m.Content) > taggedMemoMaxContent {
		return
	}
	tm.mu.Lock()
	if old, ok := tm.m[k]; ok {
		tm.size -= len(old.m.Content)
	}
	if tm.m == nil || len(tm.m) >= taggedMemoMax || tm.size+len(m.Content) > taggedMemoBytes {
		tm.m, tm.size = map[taggedKey]taggedEntry{}, 0
	}
	// The names may be parts of a request's path: keep copies, not it.
	k = taggedKey{strings.Clone(k.name), strings.Clone(k.tag)}
	tm.m[k] = taggedEntry{commits: commits, m: m}
	tm.size += len(m.Content)
	tm.mu.Unlock()
}
