package app

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/smallblobs"
)

// Blobs are content-addressed, so one blob may be wanted by several
// records, and an upload on one replica may commit the very blob another
// replica is deleting as an orphan. Two rules keep every acknowledged
// record beside its blob (CONTRACT §12):
//
//   - A writer claims the digests it is about to refer to
//     (ClaimDigests) before committing their blobs, and releases the
//     claim once its record is committed or refused. A blob is deleted
//     only through the store's DeleteUnreferencedBlob, which skips a
//     claimed digest and holds back new claims of it while it deletes, on
//     every process sharing the store.
//   - An unreferenced blob is deleted only once it is older than the grace
//     period (its last commit, which committing the same bytes again
//     refreshes): deleting a chart version, a repository or an OCI blob,
//     or refusing an upload, deletes at once only blobs that are that old
//     and leaves the younger ones to the periodic collection (the
//     registry's garbage collection, hourly, and the sweep at start).

// claimTTL is how long a claim keeps its blobs when its writer dies before
// releasing it.
const claimTTL = time.Hour

// ClaimDigests claims digests for one writer: call it before committing
// blobs that a record about to be committed refers to, and call release
// once the record is committed or refused. A blob committed after
// ClaimDigests returns is not deleted by any process until release.
func (a *App) ClaimDigests(ctx context.Context, digests ...string) (release func(), err error) {
	holder := NewID("claim_")
	if err := a.Store.ClaimBlobs(ctx, holder, digests, claimTTL); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// A claim left behind only keeps its blobs until it lapses.
			if err := a.Store.ReleaseBlobClaims(context.WithoutCancel(ctx), holder, digests); err != nil {
				a.Logger.Warn("release blob claims", "err", err)
			}
		})
	}, nil
}

// ReleaseLater runs release, a claim's release from ClaimDigests, after
// the caller's answer: on a shared store a release is a database round
// trip that a client need not wait for, as a claim held a moment longer
// only keeps its blobs from the collection a moment longer. Without
// RunClaimReleases running, or with its queue full, it releases at once.
// A writer that deletes orphans right after its release (a refused
// upload) releases at once instead.
func (a *App) ReleaseLater(release func()) {
	if !a.claimReleases.offer(release) {
		release()
	}
}

// RunClaimReleases runs the releases ReleaseLater queues until stop is
// closed, then those still queued.
func (a *App) RunClaimReleases(stop <-chan struct{}) {
	q := a.claimReleases.start()
	for {
		select {
		case release := <-q:
			release()
		case <-stop:
			a.claimReleases.stop()
			for {
				select {
				case release := <-q:
					release()
				default:
					return
				}
			}
		}
	}
}

// claimReleases is the queue of RunClaimReleases, nil when it does not
// run.
type claimReleases struct {
	mu sync.Mutex
	q  chan func()
}

// claimReleaseQueue is how many releases may wait for RunClaimReleases.
const claimReleaseQueue = 1024

func (c *claimReleases) start() chan func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.q = make(chan func(), claimReleaseQueue)
	return c.q
}

func (c *claimReleases) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.q = nil
}

// offer queues release unless the queue does not run or is full. Under
// the mutex, so no release is queued after stop, which the drain would
// miss.
func (c *claimReleases) offer(release func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.q == nil {
		return false
	}
	select {
	case c.q <- release:
		return true
	default:
		return false
	}
}

// BlobGrace returns the grace period of unreferenced blobs: younger ones
// are left to the periodic collection.
func (a *App) BlobGrace() time.Duration {
	if a.Config.BlobGrace == 0 {
		return DefaultBlobGrace
	}
	return a.Config.BlobGrace
}

// SweepOrphanBlobs deletes blobs that no record refers to and that were
// committed longer ago than Config.BlobGrace: what a crash between writing
// a blob and committing its record leaves behind. Younger blobs are spared,
// as another replica may be about to commit the record that refers to one.
// It returns early when stop closes, a listing or delete under way
// included (a blob store that does not answer does not hold up a stop).
func (a *App) SweepOrphanBlobs(ctx context.Context, stop <-chan struct{}) {
	ctx, cancel := untilStop(ctx, stop)
	defer cancel()
	var digests []string
	if err := a.Blobs.Walk(ctx, func(d string) error {
		digests = append(digests, d)
		return nil
	}); err != nil {
		if ctx.Err() == nil {
			a.Logger.Error("sweep blobs", "err", err)
		}
		return
	}
	removed, spared := 0, 0
	for _, d := range digests {
		if ctx.Err() != nil {
			return
		}
		switch a.deleteOrphan(ctx, d, a.Now().Add(-a.BlobGrace())) {
		case orphanDeleted:
			removed++
		case orphanTooYoung:
			spared++
		}
	}
	if removed > 0 || spared > 0 {
		a.Logger.Info("swept orphan blobs", "removed", removed, "spared_within_grace", spared, "grace", a.BlobGrace())
	}
}

type orphanOutcome int

const (
	orphanKept orphanOutcome = iota
	orphanDeleted
	orphanTooYoung
)

// deleteOrphan deletes the blob digest if no record refers to it, no
// writer claims it and it was committed before cutoff.
func (a *App) deleteOrphan(ctx context.Context, digest string, cutoff time.Time) orphanOutcome {
	if a.held(digest) {
		return orphanKept
	}
	young := false
	deleted, err := a.Store.DeleteUnreferencedBlob(ctx, digest, func(ctx context.Context) (bool, error) {
		mod, err := a.Blobs.ModTime(ctx, digest)
		if err != nil {
			// Gone already, or the blob store cannot say: keep it.
			return false, nil
		}
		if !mod.Before(cutoff) {
			young = true
			return false, nil
		}
		err = a.Blobs.Delete(ctx, digest)
		// Not served from memory any more, whatever happened: a failed
		// delete may have removed the file all the same.
		a.blobCache.Forget(digest)
		return true, err
	})
	if err != nil {
		a.Logger.Error("delete blob", "digest", digest, "err", err)
		return orphanKept
	}
	if young {
		return orphanTooYoung
	}
	if !deleted {
		return orphanKept
	}
	// A chart archive's rendered page goes with it.
	if err := a.Pages.Forget(ctx, digest); err != nil {
		a.Logger.Warn("forget chart page", "digest", digest, "err", err)
	}
	return orphanDeleted
}

// DeleteOrphan deletes the blob digest if no record refers to it, no
// writer claims it and it was committed before cutoff, and reports
// whether it did. While a backup holds deletes it only remembers the
// digest. Garbage collection calls it with its own clock and grace.
func (a *App) DeleteOrphan(ctx context.Context, digest string, cutoff time.Time) bool {
	return a.deleteOrphan(ctx, digest, cutoff) == orphanDeleted
}

// DeleteIfOrphan deletes the blob digest if no record refers to it, no
// writer claims it and it is older than the grace period, and reports
// whether it did; a younger one is left to the periodic collection. While
// a backup holds deletes it only remembers the digest.
func (a *App) DeleteIfOrphan(ctx context.Context, digest string) bool {
	return a.DeleteOrphan(ctx, digest, a.Now().Add(-a.BlobGrace()))
}

// BlobCollectable reports whether a blob nothing refers to would be
// deleted by DeleteOrphan with cutoff: it was committed before cutoff and
// no backup holds deletes. (A writer's claim, held for the moment between
// its blob and its record, is not consulted.) For dry runs.
func (a *App) BlobCollectable(ctx context.Context, digest string, cutoff time.Time) bool {
	a.hold.mu.Lock()
	holding := a.hold.holders > 0
	a.hold.mu.Unlock()
	if holding {
		return false
	}
	mod, err := a.Blobs.ModTime(ctx, digest)
	return err == nil && mod.Before(cutoff)
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

// ReadBlob opens the stored blob with digest for the server's own reads
// (a chart's page, its images, a diff, a policy or signature check): the
// copy in memory when a download or an upload kept one, else the blob
// store, without keeping what it reads. Returns ENOTFOUND.
func (a *App) ReadBlob(ctx context.Context, digest string) (chartctl.Blob, error) {
	return a.blobCache.Read(ctx, a.Blobs, digest)
}

// blobReader opens blobs with ReadBlob (chartpage.BlobReader).
type blobReader struct{ a *App }

func (r blobReader) Open(ctx context.Context, digest string) (chartctl.Blob, error) {
	return r.a.ReadBlob(ctx, digest)
}

// KeepBlob keeps data, the content of the blob with digest that the
// caller has just committed and still claims (ClaimDigests), in memory,
// so that its first reads through OpenBlob need not go back to the blob
// store. A blob larger than MaxKeptBlob is not kept.
func (a *App) KeepBlob(digest string, data []byte) { a.blobCache.Put(digest, data) }

// MaxKeptBlob returns the size of the largest blob kept in memory: 0 when
// none is (Config.BlobCacheSize 0).
func (a *App) MaxKeptBlob() int64 { return a.blobCache.MaxBlob() }

// BlobCacheStats describes the blobs held in memory for downloads.
func (a *App) BlobCacheStats() smallblobs.Stats { return a.blobCache.Stats() }
