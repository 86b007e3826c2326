// Package smallblobs keeps small blobs in memory for serving: chart
// archives, provenance files and OCI blobs that every `helm pull`, CI job
// and registry client downloads again and again.
//
// Blobs are content-addressed and never change under their digest, so a
// copy in memory is never stale; the only change a blob can undergo is its
// deletion, which the application layer reports with Forget. The cache is
// bounded twice: blobs larger than a per-blob limit are never kept, and the
// bytes kept stay within a total budget, the least recently served blobs
// going first.
package smallblobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Defaults of New's bounds.
const (
	// DefaultBudget is the total of blob bytes kept.
	DefaultBudget = 64 << 20
	// DefaultMaxBlob is the largest blob kept. Chart archives are a few
	// KiB to a few hundred; the largest stay on disk, where sendfile
	// serves them without copying.
	DefaultMaxBlob = 256 << 10
)

// Cache keeps recently served small blobs in memory, least recently used
// first out. A nil *Cache keeps nothing: Open then reads the store every
// time. It is safe for concurrent use.
type Cache struct {
	budget, maxBlob int64

	mu sync.Mutex
	// gen is raised by every Forget, so that a blob read from the store
	// while it was being deleted is not kept.
	gen     uint64
	entries map[string]*entry
	// lru is the sentinel of a circular list: lru.next is the most
	// recently served entry, lru.prev the least.
	lru  entry
	used int64

	hits, misses atomic.Uint64
}

type entry struct {
	blob       *Blob
	prev, next *entry
}

// New returns a cache keeping at most budget bytes of blobs, none larger
// than maxBlob. It returns nil, a cache that keeps nothing, when either
// bound is not positive.
func New(budget, maxBlob int64) *Cache {
	if budget <= 0 || maxBlob <= 0 {
		return nil
	}
	c := &Cache{budget: budget, maxBlob: min(maxBlob, budget), entries: map[string]*entry{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// Blob is a blob held in memory, with the header values a download of it
// sends, formatted once. Its fields are shared by every request serving
// it: nothing may modify them.
type Blob struct {
	digest    string
	data      []byte
	digestHdr []string
	etag      []string
	length    []string
}

func newBlob(digest string, data []byte) *Blob {
	// Capacity equal to length: an Add to a response header holding one
	// of these copies instead of writing into it.
	return &Blob{
		digest:    digest,
		data:      data,
		digestHdr: []string{digest}[:1:1],
		etag:      []string{`"` + digest + `"`}[:1:1],
		length:    []string{strconv.Itoa(len(data))}[:1:1],
	}
}

// Digest returns the blob's digest.
func (b *Blob) Digest() string { return b.digest }

// Bytes returns the blob's content. The slice is shared: do not modify it.
func (b *Blob) Bytes() []byte { return b.data }

// DigestHeader returns the value of a header naming the blob's digest
// (the registry's Docker-Content-Digest). Shared: do not modify it.
func (b *Blob) DigestHeader() []string { return b.digestHdr }

// ETagHeader returns the value of an ETag header for the blob: its digest,
// quoted (a strong validator). Shared: do not modify it.
func (b *Blob) ETagHeader() []string { return b.etag }

// LengthHeader returns the value of a Content-Length header of the whole
// blob. Shared: do not modify it.
func (b *Blob) LengthHeader() []string { return b.length }

// Reader reads a blob held in memory. It implements chartctl.Blob.
type Reader struct {
	bytes.Reader
	blob *Blob
}

// Size returns the blob's length in bytes.
func (r *Reader) Size() int64 { return int64(len(r.blob.data)) }

// Close does nothing: the bytes stay in the cache.
func (r *Reader) Close() error { return nil }

// Blob returns the blob in memory the reader reads.
func (r *Reader) Blob() *Blob { return r.blob }

// NewReader returns a reader of b from its first byte.
func (b *Blob) NewReader() *Reader {
	r := &Reader{blob: b}
	r.Reset(b.data)
	return r
}

// Open returns the blob with digest: from memory when it is kept, else
// from store, keeping it when it is small enough. A blob too large to keep
// is returned as store opened it. Errors are store's (ENOTFOUND for a
// missing blob); a missing blob is never remembered.
func (c *Cache) Open(ctx context.Context, store chartctl.BlobStore, digest string) (chartctl.Blob, error) {
	if c == nil {
		return store.Open(ctx, digest)
	}
	c.mu.Lock()
	if e := c.entries[digest]; e != nil {
		c.moveToFront(e)
		b := e.blob
		c.mu.Unlock()
		c.hits.Add(1)
		return b.NewReader(), nil
	}
	gen := c.gen
	c.mu.Unlock()
	c.misses.Add(1)

	sb, err := store.Open(ctx, digest)
	if err != nil {
		return nil, err
	}
	size := sb.Size()
	if size > c.maxBlob {
		return sb, nil
	}
	data := make([]byte, size)
	_, err = io.ReadFull(sb, data)
	if cerr := sb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", digest, err)
	}
	b := newBlob(digest, data)
	c.mu.Lock()
	if c.gen == gen && c.entries[digest] == nil {
		c.insert(b)
	}
	c.mu.Unlock()
	return b.NewReader(), nil
}

// Read returns the blob with digest for the server's own use (rendering
// a chart's page, finding its images): from memory when it is kept, else
// from store, without keeping it, so that work over many blobs does not
// push out the ones clients download. It counts neither a hit nor a miss.
func (c *Cache) Read(ctx context.Context, store chartctl.BlobStore, digest string) (chartctl.Blob, error) {
	if c != nil {
		c.mu.Lock()
		e := c.entries[digest]
		c.mu.Unlock()
		if e != nil {
			return e.blob.NewReader(), nil
		}
	}
	return store.Open(ctx, digest)
}

// MaxBlob returns the size of the largest blob the cache keeps: 0 for a
// nil cache, which keeps none.
func (c *Cache) MaxBlob() int64 {
	if c == nil {
		return 0
	}
	return c.maxBlob
}

// Put keeps data, the content of the blob with digest, that its writer has
// just committed to the store, so that its first reads need not go back to
// the store. The caller must hold the blob against deletion (a claim on
// its digest) until Put returns, so the store has what the cache keeps.
// Data larger than MaxBlob is not kept; the cache keeps data, which the
// caller must not modify afterwards.
func (c *Cache) Put(digest string, data []byte) {
	if c == nil || int64(len(data)) > c.maxBlob {
		return
	}
	b := newBlob(digest, data)
	c.mu.Lock()
	if c.entries[digest] == nil {
		c.insert(b)
	}
	c.mu.Unlock()
}

// Forget drops the blob with digest: call it when the blob is deleted
// from the store, so that it is no longer served.
func (c *Cache) Forget(digest string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	if e := c.entries[digest]; e != nil {
		c.remove(e)
	}
	c.mu.Unlock()
}

// Stats describes a cache's contents and use.
type Stats struct {
	// Blobs and Bytes are what the cache holds now.
	Blobs int
	Bytes int64
	// Hits and Misses count Open calls answered from memory and from the
	// store.
	Hits, Misses uint64
}

// Stats returns the cache's current contents and counters.
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	s := Stats{Blobs: len(c.entries), Bytes: c.used}
	c.mu.Unlock()
	s.Hits, s.Misses = c.hits.Load(), c.misses.Load()
	return s
}

// insert adds b as the most recently served blob and evicts the least
// recently served ones beyond the budget. c.mu is held.
func (c *Cache) insert(b *Blob) {
	e := &entry{blob: b}
	c.entries[b.digest] = e
	e.prev, e.next = &c.lru, c.lru.next
	e.prev.next, e.next.prev = e, e
	c.used += int64(len(b.data))
	for c.used > c.budget {
		c.remove(c.lru.prev)
	}
}

// remove unlinks e. c.mu is held.
func (c *Cache) remove(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	delete(c.entries, e.blob.digest)
	c.used -= int64(len(e.blob.data))
}

// moveToFront marks e as the most recently served. c.mu is held.
func (c *Cache) moveToFront(e *entry) {
	if c.lru.next == e {
		return
	}
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = &c.lru, c.lru.next
	e.prev.next, e.next.prev = e, e
}
