package bolt

import (
	"sync"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// commitMemo keeps answers of a read, each with the count of commits to
// the file (file.commits) read before it was found. While the count is
// the same nothing has been written, so the answer is what the lookups
// would find again; a read then needs no transaction, no bucket lookup
// and no copy. After any write the entries are stale and are replaced as
// they are read again, so nothing needs invalidating. A memo belongs to
// one DB. The answers are shared by every read that finds them: no one
// may modify them.
//
// An answer found after a commit but before its count (bbolt counts after
// the commit is on disk) is kept under the older count: it is newer than
// its count says, never older, and is not used once the count moves on.
type commitMemo[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]commitEntry[V]
	// size is the total of the entries' sizes (sizeOf).
	size int
	// maxEntries and maxBytes bound the memo: past either it starts over.
	// An answer larger than maxOne is not kept.
	maxEntries, maxBytes, maxOne int
	// sizeOf is an answer's size in bytes, for the bounds; nil counts 0.
	sizeOf func(*V) int
}

type commitEntry[V any] struct {
	commits uint64
	v       *V
}

// get returns the answer kept for k as found when the file had had
// commits commits.
func (cm *commitMemo[K, V]) get(k K, commits uint64) (*V, bool) {
	cm.mu.RLock()
	e, ok := cm.m[k]
	cm.mu.RUnlock()
	if !ok || e.commits != commits {
		return nil, false
	}
	return e.v, true
}

// put keeps v, found for k in a transaction begun after the file had had
// commits commits, unless it is larger than maxOne. v is shared from
// then on. k must not hold parts of a request (put copies of them).
func (cm *commitMemo[K, V]) put(k K, commits uint64, v *V) {
	n := 0
	if cm.sizeOf != nil {
		n = cm.sizeOf(v)
	}
	if n > cm.maxOne {
		return
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if old, ok := cm.m[k]; ok && cm.sizeOf != nil {
		cm.size -= cm.sizeOf(old.v)
	}
	if cm.m == nil || len(cm.m) >= cm.maxEntries || cm.size+n > cm.maxBytes {
		cm.m, cm.size = map[K]commitEntry[V]{}, 0
	}
	cm.m[k] = commitEntry[V]{commits: commits, v: v}
	cm.size += n
}

// nameKey is a key of two names: a repository's and a tag's or digest's.
type nameKey struct{ name, ref string }

// commitMemos are a DB's memos of the reads every registry GET makes.
type commitMemos struct {
	// tagged keeps TaggedManifest's answers. A manifest may be megabytes
	// (the registry takes up to 4 MiB); one of more than 64 KiB is not
	// kept, and its reads go to the file every time (chart manifests are
	// under 1 KiB).
	tagged commitMemo[nameKey, chartctl.OCIManifest]
	// links keeps BlobLink's answers.
	links commitMemo[nameKey, chartctl.OCIBlobLink]
}

// The memos' bounds.
const (
	commitMemoMax        = 4096
	taggedMemoBytes      = 16 << 20
	taggedMemoMaxContent = 64 << 10
)

func newCommitMemos() *commitMemos {
	return &commitMemos{
		tagged: commitMemo[nameKey, chartctl.OCIManifest]{
			maxEntries: commitMemoMax, maxBytes: taggedMemoBytes, maxOne: taggedMemoMaxContent,
			sizeOf: func(m *chartctl.OCIManifest) int { return len(m.Content) },
		},
		links: commitMemo[nameKey, chartctl.OCIBlobLink]{maxEntries: commitMemoMax},
	}
}
