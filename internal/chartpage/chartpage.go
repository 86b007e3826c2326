// Package chartpage keeps the rendered web page of every chart version
// (internal/chartrender's Page), so a page view reads stored JSON instead
// of parsing the archive, its Markdown and its YAML.
//
// A page is rendered once, when the version is stored (Store.RenderLater
// is the hook the write path calls after a successful upload: Run renders
// it in the background once the upload is answered), and kept as JSON
// in a Backend keyed by the chart archive's digest (a bucket of the bolt
// metadata file). Pages are not kept in the blob store: it holds exactly
// the blobs chart records refer to, and its orphan sweep, metrics and
// consistency checks rely on that. Versions stored before pages existed
// and pages rendered by an older renderer (chartrender.FormatVersion) are
// rendered on first view and kept from then on. Pages depend only on the
// archive's bytes, so the archive digest is the key: two repositories
// holding the same archive share one page.
package chartpage

import (
	"container/list"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartrender"
	"github.com/chartctl/chartctl/internal/debounce"
)

// Backend keeps encoded pages by chart archive digest. *bolt.DB
// implements it; NoBackend is for metadata stores that do not.
type Backend interface {
	// ChartPage returns the page kept for chartDigest. Returns ENOTFOUND
	// if none is kept.
	ChartPage(ctx context.Context, chartDigest string) ([]byte, error)
	// SetChartPages keeps each page of pages for its chart digest, in one
	// write.
	SetChartPages(ctx context.Context, pages map[string][]byte) error
	// DeleteChartPage drops chartDigest's page; a missing one is no error.
	DeleteChartPage(ctx context.Context, chartDigest string) error
}

// BlobReader opens the stored blob with a digest (a chartctl.BlobStore
// does; the server passes its copies in memory first).
type BlobReader interface {
	Open(ctx context.Context, digest string) (chartctl.Blob, error)
}

// DefaultCacheSize is how many decoded pages a Store keeps in memory.
const DefaultCacheSize = 256

// Options configure a Store.
type Options struct {
	// Blobs holds the chart archives, read to render.
	Blobs BlobReader
	// Backend keeps the pages.
	Backend Backend
	// Limits bound the archives read (the server's chart limits).
	Limits chart.Limits
	// CacheSize is how many decoded pages stay in memory
	// (DefaultCacheSize if 0, none if negative).
	CacheSize int
	// Logger receives problems that do not fail a request.
	Logger *slog.Logger
	// LaterQuiet and LaterMax are Run's wait for a pause in the pushes
	// (laterQuiet and laterMax if 0; tests set them).
	LaterQuiet, LaterMax time.Duration
}

// Store keeps rendered pages. It is safe for concurrent use.
type Store struct {
	opts  Options
	group singleflight.Group
	// later holds the digests RenderLater queued for Run.
	later chan string

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
	if opts.LaterQuiet <= 0 {
		opts.LaterQuiet = laterQuiet
	}
	if opts.LaterMax <= 0 {
		opts.LaterMax = laterMax
	}
	return &Store{opts: opts, lru: list.New(), items: map[string]*list.Element{}, later: make(chan string, laterQueue)}
}

// laterQueue is how many pages RenderLater holds for Run; more are
// rendered on first view instead.
const laterQueue = 1024

// Run keeps the pages it renders in batches: after the first queued
// digest it waits for the pushes to pause (laterQuiet with nothing new
// queued), at most laterMax after the first and for at most laterBatch
// pages, then renders them and keeps them in one write. A push renders
// its page in the background anyway; waiting for the pause keeps the
// renders (CPU) and their commit off a burst of pushes (a burst on a
// freshly started server ran about a third slower beside them;
// docs/performance.md, "OCI side by side"), while a steady stream still
// sees its pages within laterMax.
const (
	laterQuiet = 50 * time.Millisecond
	laterMax   = time.Second
	laterBatch = 64
)

// RenderLater queues the page of the stored archive with chartDigest for
// Run, which renders and keeps it in the background: an upload is
// answered without waiting for its page (a Markdown render and a store
// commit). A page not rendered by then (no Run, a full queue, a stop
// first) is rendered on first view, as Get does.
func (s *Store) RenderLater(chartDigest string) {
	select {
	case s.later <- chartDigest:
	default:
	}
}

// Run renders the pages RenderLater queues until stop is closed. Failures
// are logged: the page is then rendered on first view.
func (s *Store) Run(stop <-chan struct{}) {
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return
		case d := <-s.later:
			s.renderBatch(ctx, s.gather(d, stop))
		}
	}
}

// gather returns first and the digests queued after it until the queue
// has been quiet for laterQuiet, or laterMax has passed since first, or
// laterBatch are gathered, without repeats.
func (s *Store) gather(first string, stop <-chan struct{}) []string {
	batch := []string{first}
	debounce.Gather(s.later, s.opts.LaterQuiet, s.opts.LaterMax, stop, func(d string) bool {
		if !slices.Contains(batch, d) {
			batch = append(batch, d)
		}
		return len(batch) < laterBatch
	})
	return batch
}

// renderBatch renders the pages of digests not already cached, and keeps
// them in one write. Each page is in the memory cache as soon as it is
// rendered, so a view meanwhile does not render it again.
func (s *Store) renderBatch(ctx context.Context, digests []string) {
	pages := map[string][]byte{}
	for _, d := range digests {
		if s.cached(d) != nil {
			continue
		}
		b, err := s.renderOne(ctx, d)
		if err != nil {
			if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				s.opts.Logger.Warn("render chart page", "digest", d, "err", err)
			}
			continue
		}
		pages[d] = b
	}
	if len(pages) == 0 {
		return
	}
	if err := s.opts.Backend.SetChartPages(ctx, pages); err != nil {
		// The pages stay cached; a view after they fall out of the cache
		// renders and keeps them again.
		s.opts.Logger.Warn("keep chart pages", "pages", len(pages), "err", err)
	}
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
	if err := s.opts.Backend.SetChartPages(ctx, map[string][]byte{chartDigest: b}); err != nil {
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
	return s.opts.Backend.DeleteChartPage(ctx, chartDigest)
}

// load reads a kept page of the current format, or returns nil.
func (s *Store) load(ctx context.Context, chartDigest string) *chartrender.Page {
	b, err := s.opts.Backend.ChartPage(ctx, chartDigest)
	if err != nil {
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			s.opts.Logger.Warn("load chart page", "digest", chartDigest, "err", err)
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
		p, err := s.renderArchive(ctx, chartDigest)
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

// renderOne renders the page of chartDigest for a batch: in the memory
// cache at once, encoded for the batch's write. A view rendering the same
// page meanwhile shares this rendering.
func (s *Store) renderOne(ctx context.Context, chartDigest string) ([]byte, error) {
	v, err, _ := s.group.Do(chartDigest, func() (any, error) {
		p, err := s.renderArchive(ctx, chartDigest)
		if err != nil {
			return nil, err
		}
		s.remember(chartDigest, p)
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*chartrender.Page).Encode()
}

// renderArchive renders the page of the stored archive with chartDigest.
func (s *Store) renderArchive(ctx context.Context, chartDigest string) (*chartrender.Page, error) {
	blob, err := s.opts.Blobs.Open(ctx, chartDigest)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	return chartrender.Render(blob, s.opts.Limits)
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

// NoBackend keeps nothing: with it pages live only in the Store's memory
// cache and are rendered again when they fall out of it.
type NoBackend struct{}

// ChartPage implements Backend; it always returns ENOTFOUND.
func (NoBackend) ChartPage(context.Context, string) ([]byte, error) {
	return nil, chartctl.Errorf(chartctl.ENOTFOUND, "No rendered page for this chart.")
}

// SetChartPages implements Backend; it keeps nothing.
func (NoBackend) SetChartPages(context.Context, map[string][]byte) error { return nil }

// DeleteChartPage implements Backend.
func (NoBackend) DeleteChartPage(context.Context, string) error { return nil }

// BackendFor returns store as a Backend when it implements one (the bolt
// and PostgreSQL stores do), else NoBackend.
func BackendFor(store any) Backend {
	if b, ok := store.(Backend); ok {
		return b
	}
	return NoBackend{}
}
