package app

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/smallblobs"
)

// OpenBlob opens the stored blob with digest for a download, by any
// protocol. Small blobs are served from memory once read (see
// Config.BlobCacheSize): blobs never change under their digest, and the
// cache forgets a blob when App deletes it. Returns ENOTFOUND.
//
// A blob held in memory is a *smallblobs.Reader, whose Blob carries the
// bytes and the formatted ETag and Content-Length header values.
func (a *App) OpenBlob(ctx context.Context, digest string) (chartctl.Blob, error) {
	return a.blobCache.Open(ctx, a.Blobs, digest)
}

// BlobCacheStats describes the blobs held in memory for downloads.
func (a *App) BlobCacheStats() smallblobs.Stats { return a.blobCache.Stats() }

// digestLocks serializes, per blob digest, an upload's commit of blob and
// record against the deletion of an orphaned blob with the same digest.
type digestLocks struct {
	stripes [64]sync.Mutex
}

func (l *digestLocks) stripe(digest string) int {
	var h uint32
	for i := 0; i < len(digest); i++ {
		h = h*31 + uint32(digest[i])
	}
	return int(h % uint32(len(l.stripes)))
}

func (l *digestLocks) lock(digest string) func() {
	m := &l.stripes[l.stripe(digest)]
	m.Lock()
	return m.Unlock
}

// lockAll takes the stripes of several digests in a fixed order.
func (l *digestLocks) lockAll(digests []string) func() {
	idx := map[int]bool{}
	for _, d := range digests {
		idx[l.stripe(d)] = true
	}
	order := make([]int, 0, len(idx))
	for i := range idx {
		order = append(order, i)
	}
	sort.Ints(order)
	for _, i := range order {
		l.stripes[i].Lock()
	}
	return func() {
		for _, i := range order {
			l.stripes[i].Unlock()
		}
	}
}

// LockDigests holds the commit locks of digests until the returned
// function is called: a protocol that commits blobs and then the record
// referring to them (the OCI registry) holds them across both, so no
// orphan sweep removes a blob between the two.
func (a *App) LockDigests(digests ...string) (unlock func()) {
	return a.locks.lockAll(digests)
}

// SweepOrphanBlobs deletes blobs that no record refers to and that were
// committed longer ago than Config.BlobGrace: what a crash between writing
// a blob and committing its record leaves behind. Younger blobs are spared,
// as another replica may be about to commit the record that refers to one.
// It takes each digest's lock, so it never races an upload of the same
// bytes in this process. It returns early when stop closes.
func (a *App) SweepOrphanBlobs(ctx context.Context, stop <-chan struct{}) {
	var digests []string
	if err := a.Blobs.Walk(ctx, func(d string) error {
		digests = append(digests, d)
		return nil
	}); err != nil {
		a.Logger.Error("sweep blobs", "err", err)
		return
	}
	grace := a.Config.BlobGrace
	if grace == 0 {
		grace = DefaultBlobGrace
	}
	removed, spared := 0, 0
	for _, d := range digests {
		select {
		case <-stop:
			return
		default:
		}
		switch a.deleteOrphanOlderThan(ctx, d, a.Now().Add(-grace)) {
		case orphanDeleted:
			removed++
		case orphanTooYoung:
			spared++
		}
	}
	if removed > 0 || spared > 0 {
		a.Logger.Info("swept orphan blobs", "removed", removed, "spared_within_grace", spared, "grace", grace)
	}
}

type orphanOutcome int

const (
	orphanKept orphanOutcome = iota
	orphanDeleted
	orphanTooYoung
)

// deleteOrphanOlderThan deletes the blob digest if no record refers to it
// and it was committed before cutoff.
func (a *App) deleteOrphanOlderThan(ctx context.Context, digest string, cutoff time.Time) orphanOutcome {
	if a.held(digest) {
		return orphanKept
	}
	unlock := a.locks.lock(digest)
	defer unlock()
	ref, err := a.Store.BlobReferenced(ctx, digest)
	if err != nil || ref {
		return orphanKept
	}
	mod, err := a.Blobs.ModTime(ctx, digest)
	if err != nil {
		return orphanKept
	}
	if !mod.Before(cutoff) {
		return orphanTooYoung
	}
	err = a.Blobs.Delete(ctx, digest)
	a.blobCache.Forget(digest)
	if err != nil {
		a.Logger.Error("delete blob", "digest", digest, "err", err)
		return orphanKept
	}
	if err := a.Pages.Forget(ctx, digest); err != nil {
		a.Logger.Warn("forget chart page", "digest", digest, "err", err)
	}
	return orphanDeleted
}

// blobHold defers blob deletions while a backup streams blobs that its
// snapshot still refers to.
type blobHold struct {
	mu       sync.Mutex
	holders  int
	deferred map[string]bool
}

// HoldBlobDeletes keeps every blob from being deleted until release is
// called: a backup takes its snapshot after holding, so a chart deleted
// meanwhile keeps its blob until the backup has copied it. Deletions asked
// for in between are done at release.
func (a *App) HoldBlobDeletes() (release func()) {
	a.hold.mu.Lock()
	a.hold.holders++
	a.hold.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.hold.mu.Lock()
			a.hold.holders--
			var todo []string
			if a.hold.holders == 0 {
				for d := range a.hold.deferred {
					todo = append(todo, d)
				}
				a.hold.deferred = nil
			}
			a.hold.mu.Unlock()
			for _, d := range todo {
				a.DeleteIfOrphan(context.Background(), d)
			}
		})
	}
}

// held records digest for deletion at release when deletes are held.
func (a *App) held(digest string) bool {
	a.hold.mu.Lock()
	defer a.hold.mu.Unlock()
	if a.hold.holders == 0 {
		return false
	}
	if a.hold.deferred == nil {
		a.hold.deferred = map[string]bool{}
	}
	a.hold.deferred[digest] = true
	return true
}

// DeleteIfOrphan deletes the blob digest if no record refers to it and
// reports whether it did. While a backup holds deletes it only remembers
// the digest.
func (a *App) DeleteIfOrphan(ctx context.Context, digest string) bool {
	if a.held(digest) {
		return false
	}
	unlock := a.locks.lock(digest)
	defer unlock()
	ref, err := a.Store.BlobReferenced(ctx, digest)
	if err != nil || ref {
		return false
	}
	err = a.Blobs.Delete(ctx, digest)
	// Forgotten whatever happened: a failed delete may have removed the
	// file all the same.
	a.blobCache.Forget(digest)
	if err != nil {
		a.Logger.Error("delete blob", "digest", digest, "err", err)
		return false
	}
	// A chart archive's rendered page goes with it.
	if err := a.Pages.Forget(ctx, digest); err != nil {
		a.Logger.Warn("forget chart page", "digest", digest, "err", err)
	}
	return true
}
