package bolt

import (
	"context"
	"sync"
	"time"
)

// blobClaims are the blob claims of the one process that has the bolt file
// open (bbolt locks it), kept in memory like the leases: they coordinate
// that process's goroutines.
type blobClaims struct {
	mu   sync.Mutex
	cond *sync.Cond
	// held maps a digest to its claims' holders and their expiry.
	held map[string]map[string]time.Time
	// deleting holds the digests a DeleteUnreferencedBlob is deleting.
	deleting map[string]bool
}

func (c *blobClaims) init() {
	if c.cond == nil {
		c.cond = sync.NewCond(&c.mu)
		c.held = map[string]map[string]time.Time{}
		c.deleting = map[string]bool{}
	}
}

// ClaimBlobs claims digests for holder until ttl from now, once no
// deletion of any of them is under way.
func (db *DB) ClaimBlobs(ctx context.Context, holder string, digests []string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &db.claims
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	for c.anyDeleting(digests) {
		c.cond.Wait()
	}
	expires := db.Now().Add(ttl)
	for _, d := range digests {
		if d == "" {
			continue
		}
		if c.held[d] == nil {
			c.held[d] = map[string]time.Time{}
		}
		c.held[d][holder] = expires
	}
	return nil
}

func (c *blobClaims) anyDeleting(digests []string) bool {
	for _, d := range digests {
		if c.deleting[d] {
			return true
		}
	}
	return false
}

// ReleaseBlobClaims ends holder's claims on digests.
func (db *DB) ReleaseBlobClaims(ctx context.Context, holder string, digests []string) error {
	c := &db.claims
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	for _, d := range digests {
		delete(c.held[d], holder)
		if len(c.held[d]) == 0 {
			delete(c.held, d)
		}
	}
	return nil
}

// claimed reports whether a claim on digest lasts, forgetting lapsed ones.
func (c *blobClaims) claimed(digest string, now time.Time) bool {
	for h, exp := range c.held[digest] {
		if now.Before(exp) {
			return true
		}
		delete(c.held[digest], h)
	}
	delete(c.held, digest)
	return false
}

// DeleteUnreferencedBlob runs del when no record refers to digest and no
// claim on it lasts; claims of digest wait meanwhile.
func (db *DB) DeleteUnreferencedBlob(ctx context.Context, digest string, del func(ctx context.Context) (bool, error)) (bool, error) {
	if digest == "" {
		return false, nil
	}
	c := &db.claims
	c.mu.Lock()
	c.init()
	for c.deleting[digest] {
		c.cond.Wait()
	}
	if c.claimed(digest, db.Now()) {
		c.mu.Unlock()
		return false, nil
	}
	// Checked under the mutex: a writer claims before it commits a
	// reference, so none can appear between this check and del.
	ref, err := db.BlobReferenced(ctx, digest)
	if err != nil || ref {
		c.mu.Unlock()
		return false, err
	}
	c.deleting[digest] = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.deleting, digest)
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	return del(ctx)
}
