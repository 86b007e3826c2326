// Package chartpage keeps the rendered web page of every chart version
// (internal/chartrender's Page), so a page view reads stored JSON instead
// of parsing the archive, its Markdown and its YAML.
//
// A page is rendered once, when the version is stored (Store.Render is the
// hook the write path calls after a successful upload), and kept as a blob
// in the content-addressed blob store, found through an Index from the
// chart archive's digest. Versions stored before pages existed, pages
// rendered by an older renderer (chartrender.FormatVersion) and pages whose
// blob went missing are rendered on first view and kept from then on.
// Pages depend only on the archive's bytes, so the archive digest is the
// key: two repositories holding the same archive share one page.
package chartpage

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartrender"
)

// Index records which blob holds the page of a chart archive. *bolt.DB
// implements it; MemoryIndex is for stores that do not.
type Index interface {
	// ChartPage returns the page blob digest for chartDigest. Returns
	// ENOTFOUND if none is recorded.
	ChartPage(ctx context.Context, chartDigest string) (string, error)
	// SetChartPage records pageDigest for chartDigest.
	SetChartPage(ctx context.Context, chartDigest, pageDigest string) error
	// DeleteChartPage forgets chartDigest's page; a missing one is no error.
	DeleteChartPage(ctx context.Context, chartDigest string) error
}

// DefaultCacheSize is how many decoded pages a Store keeps in memory.
const DefaultCacheSize = 256

// Options configure a Store.
type Options struct {
	// Blobs holds chart archives (read to render) and the pages.
	Blobs chartctl.BlobStore
	// Index maps archive digests to page blobs.
	Index Index
	// Limits bound the archives read (the server's chart limits).
	Limits chart.Limits
	// CacheSize is how many decoded pages stay in memory
	// (DefaultCacheSize if 0, none if negative).
	CacheSize int
	// Logger receives problems that do not fail a request.
	Logger *slog.Logger
}

// Store keeps rendered pages. It is safe for concurrent use.
type Store struct {
	opts  Options
	group singleflight.Group

	mu    sync.Mutex
	lru   *list.List
	items map[string]*list.Element
}

type cached struct {
	digest string
	page   *chartrender.Page
}

// New returns a Store over opts.
func New(opts Options) *Store {
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Store{opts: opts, lru: list.New(), items: map[string]*list.Element{}}
}

// Render renders the page of the stored archive with chartDigest and
// keeps it. This is the hook the chart write path calls once a version is
// committed (before or after answering the client: a page not rendered
// then is rendered on first view). It returns the archive's validation
// error for an archive that is not a valid chart, and ENOTFOUND when no
// blob has the digest.
func (s *Store) Render(ctx context.Context, chartDigest string) error {
	_, err := s.render(ctx, chartDigest)
	return err
}

// Put keeps p as the page of the archive with chartDigest, for a caller
// that rendered it while reading the upload.
func (s *Store) Put(ctx context.Context, chartDigest string, p *chartrender.Page) error {
	b, err := p.Encode()
	if err != nil {
		return err
	}
	w, err := s.opts.Blobs.Create(ctx)
	if err != nil {
		return fmt.Errorf("store chart page: %w", err)
	}
	defer w.Abort()
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("store chart page: %w", err)
	}
	pageDigest, err := w.Commit()
	if err != nil {
		return fmt.Errorf("store chart page: %w", err)
	}
	if err := s.opts.Index.SetChartPage(ctx, chartDigest, pageDigest); err != nil {
		return err
	}
	s.remember(chartDigest, p)
	return nil
}

// Get returns the page of the archive with chartDigest, rendering and
// keeping it first when it is not stored yet (or was rendered by an older
// renderer). Returns ENOTFOUND when no blob has the digest, and the
// archive's validation error when it is not a valid chart.
func (s *Store) Get(ctx context.Context, chartDigest string) (*chartrender.Page, error) {
	if p := s.cached(chartDigest); p != nil {
		return p, nil
	}
	if p := s.load(ctx, chartDigest); p != nil {
		s.remember(chartDigest, p)
		return p, nil
	}
	return s.render(ctx, chartDigest)
}

// Forget drops the page of the archive with chartDigest: call it when the
// archive's blob is deleted (the digest is no longer referenced).
func (s *Store) Forget(ctx context.Context, chartDigest string) error {
	s.mu.Lock()
	if e, ok := s.items[chartDigest]; ok {
		s.lru.Remove(e)
		delete(s.items, chartDigest)
	}
	s.mu.Unlock()
	pageDigest, err := s.opts.Index.ChartPage(ctx, chartDigest)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.opts.Index.DeleteChartPage(ctx, chartDigest); err != nil {
		return err
	}
	// Another archive may render to the same bytes (the page does not
	// hold the digest); such a page is rendered again when viewed.
	return s.opts.Blobs.Delete(ctx, pageDigest)
}

// load reads a stored page of the current format, or returns nil.
func (s *Store) load(ctx context.Context, chartDigest string) *chartrender.Page {
	pageDigest, err := s.opts.Index.ChartPage(ctx, chartDigest)
	if err != nil {
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			s.opts.Logger.Warn("look up chart page", "digest", chartDigest, "err", err)
		}
		return nil
	}
	b, err := s.readBlob(ctx, pageDigest, 64<<20)
	if err != nil {
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			s.opts.Logger.Warn("read chart page", "digest", chartDigest, "err", err)
		}
		return nil
	}
	p, err := chartrender.Decode(b)
	if err != nil || p.Format != chartrender.FormatVersion {
		return nil
	}
	return p
}

// render renders and keeps the page; concurrent calls for one digest
// share one rendering.
func (s *Store) render(ctx context.Context, chartDigest string) (*chartrender.Page, error) {
	v, err, _ := s.group.Do(chartDigest, func() (any, error) {
		blob, err := s.opts.Blobs.Open(ctx, chartDigest)
		if err != nil {
			return nil, err
		}
		defer blob.Close()
		p, err := chartrender.Render(blob, s.opts.Limits)
		if err != nil {
			return nil, err
		}
		if err := s.Put(ctx, chartDigest, p); err != nil {
			// The page is still good for this view; the next view tries
			// to keep it again.
			s.opts.Logger.Warn("keep chart page", "digest", chartDigest, "err", err)
			s.remember(chartDigest, p)
		}
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*chartrender.Page), nil
}

func (s *Store) readBlob(ctx context.Context, digest string, max int64) ([]byte, error) {
	b, err := s.opts.Blobs.Open(ctx, digest)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if b.Size() > max {
		return nil, fmt.Errorf("chart page blob %s is %d bytes", digest, b.Size())
	}
	var buf bytes.Buffer
	buf.Grow(int(b.Size()))
	if _, err := io.Copy(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (s *Store) cached(digest string) *chartrender.Page {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.items[digest]
	if !ok {
		return nil
	}
	s.lru.MoveToFront(e)
	return e.Value.(*cached).page
}

func (s *Store) remember(digest string, p *chartrender.Page) {
	if s.opts.CacheSize < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.items[digest]; ok {
		e.Value.(*cached).page = p
		s.lru.MoveToFront(e)
		return
	}
	s.items[digest] = s.lru.PushFront(&cached{digest: digest, page: p})
	for s.lru.Len() > s.opts.CacheSize {
		last := s.lru.Back()
		s.lru.Remove(last)
		delete(s.items, last.Value.(*cached).digest)
	}
}

// MemoryIndex is an Index kept in memory, for metadata stores without
// one: pages are then rendered again once after every restart.
type MemoryIndex struct {
	mu sync.Mutex
	m  map[string]string
}

// ChartPage implements Index.
func (m *MemoryIndex) ChartPage(_ context.Context, chartDigest string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.m[chartDigest]; ok {
		return d, nil
	}
	return "", chartctl.Errorf(chartctl.ENOTFOUND, "No rendered page for this chart.")
}

// SetChartPage implements Index.
func (m *MemoryIndex) SetChartPage(_ context.Context, chartDigest, pageDigest string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[chartDigest] = pageDigest
	return nil
}

// DeleteChartPage implements Index.
func (m *MemoryIndex) DeleteChartPage(_ context.Context, chartDigest string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, chartDigest)
	return nil
}

// IndexFor returns store as an Index when it implements one, else a new
// MemoryIndex.
func IndexFor(store any) Index {
	if ix, ok := store.(Index); ok {
		return ix
	}
	return &MemoryIndex{}
}
