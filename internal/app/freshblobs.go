package app

import (
	"sync"
	"time"
)

// A push commits its blobs, then its manifest names them, and the
// manifest's checks asked the blob store whether each is still there (on
// S3 a HEAD each, one after another with the record's commit). A blob this
// process committed moments ago is there: no process deletes a blob
// committed more recently than the grace period (BlobGrace, app/blobs.go),
// and committing the same bytes again refreshes its time. NoteCommitted
// and CommittedRecently remember such commits, so those checks need not
// ask the blob store again.

// freshMaxAge bounds how long a commit is remembered, however long the
// grace period: well within it, and short enough that the memory stays
// small (freshMaxEntries).
const freshMaxAge = 5 * time.Minute

// freshMaxEntries bounds the commits remembered; past it the oldest are
// forgotten first (a forgotten blob is only asked of the blob store).
const freshMaxEntries = 8192

// freshBlobs remembers when this process last committed each of the
// recent blobs, in commit order.
type freshBlobs struct {
	mu    sync.Mutex
	at    map[string]time.Time
	order []freshCommit // oldest first; may hold stale duplicates
}

type freshCommit struct {
	digest string
	at     time.Time
}

// note remembers that digest was committed at t.
func (f *freshBlobs) note(digest string, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.at == nil {
		f.at = make(map[string]time.Time)
	}
	f.at[digest] = t
	f.order = append(f.order, freshCommit{digest, t})
	for len(f.at) > freshMaxEntries || (len(f.order) > 0 && t.Sub(f.order[0].at) > freshMaxAge) {
		old := f.order[0]
		f.order = f.order[1:]
		if f.at[old.digest].Equal(old.at) {
			delete(f.at, old.digest)
		}
	}
	if cap(f.order) > 4*freshMaxEntries && len(f.order) < cap(f.order)/4 {
		f.order = append([]freshCommit(nil), f.order...)
	}
}

// since returns when digest was last noted, and whether it was.
func (f *freshBlobs) since(digest string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.at[digest]
	return t, ok
}

// NoteCommitted records that this process has just committed the blob
// digest to the blob store (its Commit returned without error).
func (a *App) NoteCommitted(digest string) { a.fresh.note(digest, a.Now()) }

// CommittedAt returns when this process last committed the blob digest,
// if it did within freshMaxAge.
func (a *App) CommittedAt(digest string) (time.Time, bool) { return a.fresh.since(digest) }

// CommittedWithin reports whether a commit at t, by clock now, is recent
// enough for a grace period: within half of it, and within freshMaxAge.
func CommittedWithin(t, now time.Time, grace time.Duration) bool {
	if grace <= 0 {
		return false
	}
	age := now.Sub(t)
	return age >= 0 && age < min(grace/2, freshMaxAge)
}

// CommittedRecently reports whether this process committed the blob
// digest so recently that no process can have deleted it since: within
// half the grace period, and within freshMaxAge. With no grace period
// (BlobGrace negative) it is always false.
func (a *App) CommittedRecently(digest string) bool {
	t, ok := a.fresh.since(digest)
	return ok && CommittedWithin(t, a.Now(), a.BlobGrace())
}

// NoteLinked records that this process has just committed the link of
// blob digest to the OCI name (the registry's blob uploads), so that the
// chart manifest pushed next need not ask the store whether the link is
// there: the manifest's transaction checks every link again and refuses
// a manifest whose link went meanwhile.
func (a *App) NoteLinked(name, digest string) { a.freshLinks.note(name+"@"+digest, a.Now()) }

// LinkedAt returns when this process last committed the link of blob
// digest to name, if it did within freshMaxAge.
func (a *App) LinkedAt(name, digest string) (time.Time, bool) {
	return a.freshLinks.since(name + "@" + digest)
}
