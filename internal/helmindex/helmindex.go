// Package helmindex keeps the Helm repository index (index.yaml) of every
// repository current, incrementally, and serves it from pre-rendered bytes.
//
// Each chart version's YAML is rendered once, when the version is loaded or
// put; an upload or delete touches only that version, and the next request
// concatenates the stored fragments into a new body (then cached with its
// ETag and, on demand, its gzip form). A repository is read from the store
// only on its first request, never at start-up.
//
// The output is byte for byte what Helm's own writer (repo.IndexFile with
// sigs.k8s.io/yaml) produces for the same charts, which the tests check
// against Helm's code; Helm's pkg/repo is not imported here because it links
// Kubernetes libraries into the binary.
package helmindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/Masterminds/semver/v3"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/klauspost/compress/gzip"
	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// Loader returns every chart version stored in a repository. It is called
// at most once per repository until Drop, on the first Get.
type Loader func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error)

// VersionLoader returns one stored chart version, or an error with code
// chartctl.ENOTFOUND when the store does not hold it (or its repository).
type VersionLoader func(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error)

// Options configure a Cache.
type Options struct {
	// LoadVersion reads one version from the store, for Refresh. Without
	// it, Refresh makes the next Get reload the whole repository.
	LoadVersion VersionLoader
	// ContextPath is the index's serverInfo.contextPath, which the
	// ChartMuseum push plugin reads; default "/helm".
	ContextPath string
	// Observe, if set, is told how long each assembly of an index body took
	// (the load of a repository included), for metrics.
	Observe func(time.Duration)
	// DiskDir, if set, is a directory where the gzip form of every index
	// whose compressed body is DiskMin bytes or more is also kept as a
	// file, named by the index's ETag, so a server sends it with sendfile
	// (Index.GzipFile) rather than writing it from memory. The Cache owns
	// the directory: New creates it and removes what a previous process
	// left there (but the snapshots below), and a file goes once no Index
	// refers to it.
	DiskDir string
	// Generation, if set with DiskDir, returns the store's index
	// generation of a repository (chartctl.Store.IndexGeneration). The
	// whole-repository views kept on disk are then described there with
	// the generation they show, so that after a restart the first request
	// for one is answered from disk when the repository has not changed
	// (snapshot.go).
	Generation func(ctx context.Context, repo string) (string, error)
}

// DiskMin is the smallest gzip body Options.DiskDir keeps on disk: below
// it, one write from memory costs less than an open and a sendfile.
const DiskMin = 64 << 10

// Format is how an index document is written.
type Format int

const (
	// YAML is the index as Helm's own writer produces it.
	YAML Format = iota
	// JSON is the same index as one JSON document. JSON is YAML, so every
	// Helm reads it; Helm ≥ 3.13 (and Flux) see that the whole body is
	// valid JSON and decode it with encoding/json, several times faster
	// than its YAML path.
	JSON
)

// FormatOf is the Format of a repository's index format setting (a
// repository without one is YAML, chartctl.IndexFormat.OrYAML).
func FormatOf(f chartctl.IndexFormat) Format {
	if f.OrYAML() == chartctl.IndexJSON {
		return JSON
	}
	return YAML
}

// Query selects the view of a repository's index that Cache.View renders.
// The zero Query is the full YAML index.
type Query struct {
	// Format is the document's format.
	Format Format
	// Chart, if set, keeps only that chart's versions (a per-chart
	// index).
	Chart string
	// Latest, if positive, keeps only the newest Latest versions of each
	// chart, in SemVer order, pre-releases included (a newest-N index).
	Latest int
}

// Cache holds the rendered index of each repository requested so far. It
// is safe for concurrent use.
type Cache struct {
	load       Loader
	loadVer    VersionLoader
	observe    func(time.Duration)
	serverInfo []byte
	// jsonContextPath is the context path as a JSON string.
	jsonContextPath []byte

	disk        *diskFiles // nil without Options.DiskDir
	generation  func(ctx context.Context, repo string) (string, error)
	contextPath string

	mu    sync.Mutex
	repos map[string]*repoIndex
}

// MaxLatest is the largest N of a newest-N index.
const MaxLatest = 100

// Index is one rendering of a repository's index.yaml. It is immutable.
type Index struct {
	// Body is the index.yaml document.
	Body []byte
	// ETag is a strong entity tag of Body, quoted for the ETag header.
	ETag string
	// Generated is the index's generated time: the upload time of the
	// newest version it lists (the Unix epoch when it lists none).
	Generated time.Time
	// ETagHeader and LengthHeader are the values of the ETag and
	// Content-Length headers of Body, formatted once so that serving the
	// index formats nothing; every response shares them, so they must
	// never be modified. LastModifiedHeader is Generated as an HTTP
	// date, and TypeHeader the Content-Type of Body, shared alike.
	ETagHeader, LengthHeader, LastModifiedHeader, TypeHeader []string

	gzipOnce   sync.Once
	gzipped    []byte
	gzipLength []string
	disk       *diskFiles // where compress keeps a large gzip form
	gzipPath   string     // that file, "" when not on disk
	// label says which repository view and generation ix shows, when
	// that is known (a view rendered from a repository loaded at a known
	// generation and not changed since): its gzip file is then described
	// for the next process (snapshot.go).
	label *snapshotLabel
}

// Gzip returns Body gzip-compressed, computed on first use and kept.
func (ix *Index) Gzip() []byte {
	ix.gzipOnce.Do(ix.compress)
	return ix.gzipped
}

// GzipLengthHeader is the Content-Length header value of Gzip(), shared
// as LengthHeader is.
func (ix *Index) GzipLengthHeader() []string {
	ix.gzipOnce.Do(ix.compress)
	return ix.gzipLength
}

// GzipFile returns the path of a file holding exactly Gzip()'s bytes,
// or "" when the gzip form is kept in memory only (no Options.DiskDir,
// a body under DiskMin, or a failed write). The file stays as long as ix
// is reachable, so a caller holding ix may open it; it is never
// modified.
func (ix *Index) GzipFile() string {
	ix.gzipOnce.Do(ix.compress)
	return ix.gzipPath
}

func (ix *Index) compress() {
	var buf bytes.Buffer
	buf.Grow(len(ix.Body) / 4)
	// klauspost/compress's gzip: twice as fast as the standard library's
	// at its default level and as deterministic (every replica writes the
	// same bytes); a 100,000-version JSON index (81 MB) compresses in
	// 0.38 s instead of 0.72–0.87 s, about 2 % larger.
	zw := gzip.NewWriter(&buf)
	// Writes to a bytes.Buffer cannot fail.
	_, _ = zw.Write(ix.Body)
	_ = zw.Close()
	ix.gzipped = buf.Bytes()
	ix.gzipLength = headerValue(strconv.Itoa(len(ix.gzipped)))
	if ix.disk == nil || len(ix.gzipped) < DiskMin {
		return
	}
	// The name is the ETag's hash: the same body (another view of the
	// same bytes, or a render after a reload) shares one file, and a
	// changed index gets a new one. Gzip's output depends only on the
	// body, so the file holds the same bytes on every replica.
	name := strings.Trim(ix.ETag, `"`) + ".gz"
	path, err := ix.disk.keep(name, ix.gzipped)
	if err != nil {
		// Serving from memory still works; the disk is an optimisation.
		return
	}
	ix.gzipPath = path
	// The file goes when the last Index naming it is garbage: a request
	// that still holds ix (and may be about to open the file) keeps it.
	runtime.AddCleanup(ix, ix.disk.release, name)
	if ix.label != nil {
		// The sidecar and the body file are for the next process: not
		// the work of the request that asked for the gzip form (Flush
		// waits for them). The goroutine holds ix, and so the file.
		ix.disk.writing.Add(1)
		go func() {
			defer ix.disk.writing.Done()
			ix.describe(name)
		}()
	}
}

// headerValue is a one-value header slice whose capacity is its length,
// so that adding a value to the header copies it instead of writing into
// a slice other responses share.
func headerValue(v string) []string { return []string{v}[:1:1] }

// New returns a Cache that loads repositories with load.
func New(load Loader, opts Options) *Cache {
	if opts.ContextPath == "" {
		opts.ContextPath = "/helm"
	}
	si, err := yaml.Marshal(map[string]any{"serverInfo": map[string]string{"contextPath": opts.ContextPath}})
	if err != nil {
		// A map of strings always marshals.
		panic(fmt.Sprintf("helmindex: render serverInfo: %v", err))
	}
	cp, err := json.Marshal(opts.ContextPath)
	if err != nil {
		panic(fmt.Sprintf("helmindex: render contextPath: %v", err))
	}
	c := &Cache{load: load, loadVer: opts.LoadVersion, observe: opts.Observe, serverInfo: si, jsonContextPath: cp, repos: map[string]*repoIndex{},
		contextPath: opts.ContextPath}
	if opts.DiskDir != "" {
		c.disk = newDiskFiles(opts.DiskDir)
		c.generation = opts.Generation
	}
	return c
}

// repoIndex is one repository's index. mu is held while the repository
// loads, so a Refresh arriving meanwhile waits and then applies to
// the loaded state.
type repoIndex struct {
	mu     sync.Mutex
	loaded bool
	// json says the versions carry their JSON entries too: set by the
	// first JSON view, so a YAML-only repository spends nothing on them.
	json   bool
	charts map[string]*chartEntries
	names  []string // chart names in YAML key order
	// views are the rendered views of the whole repository (full and
	// newest-N); a change to any chart drops them. Per-chart views live
	// with their chart and are dropped only when it changes. A repository
	// not loaded may hold views read from snapshots, which any change
	// drops too.
	views map[Query]*Index
	// gen is the store's index generation the loaded versions show: read
	// before the load, "" once a change has been applied since (or when
	// the store could not say).
	gen string
}

// chartEntries are one chart's versions, newest first.
type chartEntries struct {
	key      []byte // "  NAME:\n"
	jkey     []byte // "\"NAME\":["
	versions []*version
	byRaw    map[string]*version
	views    [2]*Index // per-chart views by Format; nil until rendered
}

// position returns v's index in versions, by binary search: newer is a
// strict total order (ties broken by the version string).
func (ce *chartEntries) position(v *version) int {
	return sort.Search(len(ce.versions), func(i int) bool { return !newer(ce.versions[i], v) })
}

type version struct {
	raw     string
	sv      *semver.Version // nil if unparseable: sorted last, as Helm does
	frag    []byte          // "  - apiVersion: ...\n    ...\n"
	jfrag   []byte          // {"apiVersion":...}, when the repository's json is set
	created time.Time       // the version's upload time, for generated
}

// Get returns the repository's current index, loading the repository on
// its first request. A load error is returned (wrapped, so a
// *chartctl.Error keeps its code) and not cached.
func (c *Cache) Get(ctx context.Context, repo string) (*Index, error) {
	return c.View(ctx, repo, Query{})
}

// View returns the repository's current index as q selects it, loading
// the repository on its first request and rendering the view on its
// first request after a change. It returns ENOTFOUND when q.Chart is not
// a chart of the repository and EINVALID when q.Latest is past
// MaxLatest.
func (c *Cache) View(ctx context.Context, repo string, q Query) (*Index, error) {
	if q.Latest < 0 || q.Latest > MaxLatest {
		return nil, chartctl.Errorf(chartctl.EINVALID, "The number of versions must be between 1 and %d.", MaxLatest)
	}
	c.mu.Lock()
	r := c.repos[repo]
	if r == nil {
		r = &repoIndex{}
		c.repos[repo] = r
	}
	c.mu.Unlock()

	r.mu.Lock()
	defer r.mu.Unlock()
	start := time.Now()
	if q.Format == JSON && !r.json {
		// The versions were loaded without their JSON entries: load
		// again with them (once; the repository keeps them from now on).
		r.json, r.loaded = true, false
	}
	if !r.loaded && q.Chart == "" {
		// A view read from a snapshot since the start, or readable now.
		if ix := r.views[q]; ix != nil {
			return ix, nil
		}
		if ix := c.fromSnapshot(ctx, repo, q); ix != nil {
			c.keepView(r, q, ix, start)
			return ix, nil
		}
	}
	if !r.loaded {
		// The generation is read before the versions: a change committed
		// between the two makes the label older than the content, which
		// only costs a load at the next start.
		r.gen = ""
		if c.generation != nil {
			if g, err := c.generation(ctx, repo); err == nil {
				r.gen = g
			}
		}
		cvs, err := c.load(ctx, repo)
		if err != nil {
			return nil, fmt.Errorf("load index of repository %s: %w", repo, err)
		}
		r.fill(cvs)
		r.loaded = true
		r.views = nil
	}
	if q.Chart != "" {
		ce := r.charts[q.Chart]
		if ce == nil {
			return nil, chartctl.Errorf(chartctl.ENOTFOUND, "No chart %q in repository %q.", q.Chart, repo)
		}
		if ce.views[q.Format] == nil {
			ce.views[q.Format] = c.render([]selection{{ce, ce.versions}}, q.Format)
		}
		return ce.views[q.Format], nil
	}
	ix := r.views[q]
	if ix == nil {
		ix = c.render(r.selectAll(q.Latest), q.Format)
		if r.gen != "" {
			ix.label = &snapshotLabel{repo: repo, q: q, generation: r.gen, contextPath: c.contextPath}
		}
		c.keepView(r, q, ix, start)
	}
	return ix, nil
}

// keepView keeps ix as r's whole-repository view q, and reports the time
// since start of a full index's assembly (Options.Observe). r.mu is held.
func (c *Cache) keepView(r *repoIndex, q Query, ix *Index, start time.Time) {
	if r.views == nil {
		r.views = map[Query]*Index{}
	}
	r.views[q] = ix
	if c.observe != nil && q.Latest == 0 {
		c.observe(time.Since(start))
	}
}

// fill replaces r's versions with cvs, rendering their entries (and
// their JSON entries when r.json is set).
func (r *repoIndex) fill(cvs []*chartctl.ChartVersion) {
	r.charts = map[string]*chartEntries{}
	r.names = nil
	// Rendering dominates a load (about 0.1 ms a version), so it runs on
	// every CPU.
	frags, jfrags := renderAll(cvs, r.json)
	for i, cv := range cvs {
		r.insert(cv, frags[i], jfrags[i])
	}
}

// selection is one chart's part of a view: its versions to list.
type selection struct {
	ce       *chartEntries
	versions []*version
}

// selectAll selects every chart, each with its newest latest versions
// (all of them when latest is 0).
func (r *repoIndex) selectAll(latest int) []selection {
	sel := make([]selection, len(r.names))
	for i, name := range r.names {
		ce := r.charts[name]
		vs := ce.versions
		if latest > 0 && len(vs) > latest {
			vs = vs[:latest]
		}
		sel[i] = selection{ce, vs}
	}
	return sel
}

// changed drops the views a change to chart name made stale.
func (r *repoIndex) changed(name string) {
	r.views = nil
	if ce := r.charts[name]; ce != nil {
		ce.views = [2]*Index{}
	}
}

// loadedRepo returns the repository's index, locked, if it is loaded;
// otherwise nil, having dropped the views read from snapshots (the
// caller applies a change). A repository being loaded is waited for.
func (c *Cache) loadedRepo(repo string) *repoIndex {
	c.mu.Lock()
	r := c.repos[repo]
	c.mu.Unlock()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if !r.loaded {
		r.views = nil
		r.mu.Unlock()
		return nil
	}
	return r
}

// Refresh makes one chart version's entry match the store: it reads the
// version (Options.LoadVersion) while holding the repository's lock and
// inserts, replaces or removes its entry. Call it after any change to the
// version is committed.
//
// Because it reads the store rather than applying the caller's record,
// Refresh cannot leave a stale entry: an upload and a delete of the same
// version (or two overwrites) may commit in one order and refresh in the
// other, and the last refresh still reads the last commit. If the
// repository is not loaded it does nothing: its first Get reads the store. If the read fails, the repository is reloaded on its
// next Get.
func (c *Cache) Refresh(ctx context.Context, repo, name, version string) {
	r := c.loadedRepo(repo)
	if r == nil {
		return
	}
	defer r.mu.Unlock()
	// The store's generation moved past the one loaded.
	r.gen = ""
	if c.loadVer == nil {
		r.loaded, r.views = false, nil
		return
	}
	cv, err := c.loadVer(ctx, repo, name, version)
	var changed bool
	switch {
	case err == nil:
		var jfrag []byte
		if r.json {
			jfrag = renderJSON(cv)
		}
		changed = r.insert(cv, entry(cv), jfrag)
	case chartctl.ErrorCode(err) == chartctl.ENOTFOUND:
		// Drop the chart's views before remove drops the chart with its
		// last version.
		if ce := r.charts[name]; ce != nil && ce.byRaw[version] != nil {
			r.changed(name)
		}
		changed = r.remove(name, version)
	default:
		r.loaded, r.views = false, nil
		return
	}
	if changed {
		r.changed(name)
	}
}

// Flush waits for the snapshot files being written (see snapshot.go); a
// server calls it when it stops, so that the next process finds them.
func (c *Cache) Flush() {
	if c.disk != nil {
		c.disk.writing.Wait()
	}
}

// Drop forgets the repository's index (the repository was deleted, or its
// records changed behind the cache); the next Get loads it again.
func (c *Cache) Drop(repo string) {
	c.mu.Lock()
	delete(c.repos, repo)
	c.mu.Unlock()
	if c.disk != nil {
		c.disk.forgetRepo(repo)
	}
}

// SignedByAnnotation is the index annotation naming the verified signer of
// a version (CONTRACT §18 "Trust and admission"). Only chartctl sets it:
// a chart's own Chart.yaml annotation of that name is dropped, so nobody
// can claim a signature by writing it.
const SignedByAnnotation = "chartctl.io/signed-by"

// RenderEntry renders cv's entry of the index; store it in cv.IndexEntry
// so that loading the repository later needs no rendering. A version
// whose verification record names a verified signer carries
// SignedByAnnotation.
func RenderEntry(cv *chartctl.ChartVersion) []byte { return renderVersion(cv) }

// entry is cv's stored entry, or a fresh rendering when it has none.
func entry(cv *chartctl.ChartVersion) []byte {
	if len(cv.IndexEntry) > 0 {
		return cv.IndexEntry
	}
	return renderVersion(cv)
}

// renderAll renders every version, in parallel: its YAML entry and, when
// withJSON, its JSON entry too (jfrags is otherwise all nil).
func renderAll(cvs []*chartctl.ChartVersion, withJSON bool) (frags, jfrags [][]byte) {
	frags = make([][]byte, len(cvs))
	jfrags = make([][]byte, len(cvs))
	// Workers take batches rather than single versions: a JSON batch is
	// converted with one YAML parse (see entriesToJSON), and a shared
	// counter bumped once a batch costs nothing next to it.
	const batch = 256
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (len(cvs)+batch-1)/batch) {
		wg.Go(func() {
			for {
				lo := int(next.Add(batch)) - batch
				if lo >= len(cvs) {
					return
				}
				hi := min(lo+batch, len(cvs))
				for i := lo; i < hi; i++ {
					frags[i] = entry(cvs[i])
				}
				if withJSON {
					jsonBatch(cvs[lo:hi], frags[lo:hi], jfrags[lo:hi])
				}
			}
		})
	}
	wg.Wait()
	return frags, jfrags
}

// jsonBatch fills out[i], the JSON entry of cvs[i] whose YAML entry is
// frags[i]: the stored one when the store kept it (IndexEntryJSON, written
// at upload), else converted from the YAML entry, the versions without a
// stored one together in one parse.
func jsonBatch(cvs []*chartctl.ChartVersion, frags, out [][]byte) {
	var idx []int
	for i, cv := range cvs {
		if j := storedJSON(cv); j != nil {
			out[i] = j
		} else {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	if len(idx) == len(cvs) {
		entriesToJSON(frags, out)
	} else {
		sub, conv := make([][]byte, len(idx)), make([][]byte, len(idx))
		for k, i := range idx {
			sub[k] = frags[i]
		}
		entriesToJSON(sub, conv)
		for k, i := range idx {
			out[i] = conv[k]
		}
	}
	for _, i := range idx {
		if out[i] == nil {
			out[i] = recordJSON(cvs[i])
		}
	}
}

// storedJSON is cv's stored JSON entry, nil when it has none or when it
// has no stored YAML entry either (the JSON one is only ever the
// conversion of the YAML one stored with it).
func storedJSON(cv *chartctl.ChartVersion) []byte {
	if len(cv.IndexEntry) == 0 || len(cv.IndexEntryJSON) == 0 {
		return nil
	}
	return cv.IndexEntryJSON
}

// insert inserts or replaces cv, rendered as frag (and jfrag, nil unless
// the repository keeps JSON entries), and reports whether the index
// changed.
func (r *repoIndex) insert(cv *chartctl.ChartVersion, frag, jfrag []byte) bool {
	ce := r.charts[cv.Name]
	if ce == nil {
		ce = &chartEntries{key: renderKey(cv.Name), jkey: renderJSONKey(cv.Name), byRaw: map[string]*version{}}
		r.charts[cv.Name] = ce
		r.names = insertName(r.names, cv.Name)
	}
	if v := ce.byRaw[cv.Version]; v != nil {
		if bytes.Equal(v.frag, frag) && bytes.Equal(v.jfrag, jfrag) && v.created.Equal(cv.CreatedAt) {
			return false
		}
		v.frag, v.jfrag, v.created = frag, jfrag, cv.CreatedAt
		return true
	}
	nv := &version{raw: cv.Version, frag: frag, jfrag: jfrag, created: cv.CreatedAt}
	if sv, err := semver.NewVersion(cv.Version); err == nil {
		nv.sv = sv
	}
	ce.byRaw[cv.Version] = nv
	i := ce.position(nv)
	ce.versions = append(ce.versions, nil)
	copy(ce.versions[i+1:], ce.versions[i:])
	ce.versions[i] = nv
	return true
}

// remove removes a version and reports whether it was there.
func (r *repoIndex) remove(name, version string) bool {
	ce := r.charts[name]
	if ce == nil || ce.byRaw[version] == nil {
		return false
	}
	i := ce.position(ce.byRaw[version])
	ce.versions = append(ce.versions[:i], ce.versions[i+1:]...)
	delete(ce.byRaw, version)
	if len(ce.versions) == 0 {
		delete(r.charts, name)
		r.names = removeName(r.names, name)
	}
	return true
}

// newer orders versions newest first: SemVer descending, unparseable
// versions last, ties (1.0.0 and v1.0.0, or build metadata) by string.
func newer(a, b *version) bool {
	switch {
	case a.sv == nil && b.sv == nil:
		return a.raw > b.raw
	case a.sv == nil:
		return false
	case b.sv == nil:
		return true
	}
	if c := a.sv.Compare(b.sv); c != 0 {
		return c > 0
	}
	return a.raw > b.raw
}

func insertName(names []string, name string) []string {
	i := sort.Search(len(names), func(i int) bool { return !yamlKeyLess(names[i], name) })
	names = append(names, "")
	copy(names[i+1:], names[i:])
	names[i] = name
	return names
}

func removeName(names []string, name string) []string {
	for i, n := range names {
		if n == name {
			return append(names[:i], names[i+1:]...)
		}
	}
	return names
}

// render concatenates the fragments of the selected versions into a new
// Index of format f.
//
// generated is the upload time of the newest version listed, or the Unix
// epoch when there is none: a function of the content, not of when this
// process saw it change, so every replica and every restart render the
// same bytes, and the same ETag, for the same versions; and a view of
// one chart does not change when another chart does.
func (c *Cache) render(sel []selection, f Format) *Index {
	generated := time.Unix(0, 0)
	size := 64 + len(c.serverInfo)
	for _, s := range sel {
		size += len(s.ce.key) + 2
		for _, v := range s.versions {
			if f == JSON {
				size += len(v.jfrag) + 2
			} else {
				size += len(v.frag)
			}
			if v.created.After(generated) {
				generated = v.created
			}
		}
	}
	generated = generated.UTC()
	var body []byte
	if f == JSON {
		body = c.renderJSONBody(sel, generated, size)
	} else {
		body = c.renderYAMLBody(sel, generated, size)
	}
	sum := sha256.Sum256(body)
	ix := newIndex(body, `"sha256-`+hex.EncodeToString(sum[:])+`"`, generated, f)
	ix.disk = c.disk
	return ix
}

// newIndex is the Index of body, of format f, with its headers.
func newIndex(body []byte, etag string, generated time.Time, f Format) *Index {
	typ := hdrYAML
	if f == JSON {
		typ = hdrJSON
	}
	return &Index{
		Body: body, ETag: etag, Generated: generated,
		ETagHeader: headerValue(etag), LengthHeader: headerValue(strconv.Itoa(len(body))),
		LastModifiedHeader: headerValue(generated.Format(http.TimeFormat)), TypeHeader: typ,
	}
}

// Content-Type values of the two formats, shared by every Index.
var (
	hdrYAML = headerValue("application/x-yaml")
	hdrJSON = headerValue("application/json")
)

// renderYAMLBody writes the YAML document, byte for byte as Helm does.
func (c *Cache) renderYAMLBody(sel []selection, generated time.Time, size int) []byte {
	gen, err := yaml.Marshal(struct {
		Generated time.Time `json:"generated"`
	}{generated})
	if err != nil {
		// A time always marshals.
		panic(fmt.Sprintf("helmindex: render generated: %v", err))
	}
	body := make([]byte, 0, size+len(gen))
	body = append(body, "apiVersion: v1\n"...)
	if len(sel) == 0 {
		body = append(body, "entries: {}\n"...)
	} else {
		body = append(body, "entries:\n"...)
		for _, s := range sel {
			body = append(body, s.ce.key...)
			for _, v := range s.versions {
				body = append(body, v.frag...)
			}
		}
	}
	body = append(body, gen...)
	return append(body, c.serverInfo...)
}

// renderJSONBody writes the JSON document: Helm's index fields with
// Helm's names, one chart key and one version per line (so a diff of two
// indexes reads line by line), and nothing a YAML 1.1 parser would read
// differently from a JSON one.
func (c *Cache) renderJSONBody(sel []selection, generated time.Time, size int) []byte {
	body := make([]byte, 0, size)
	body = append(body, `{"apiVersion":"v1","entries":{`...)
	for i, s := range sel {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, '\n')
		body = append(body, s.ce.jkey...)
		for j, v := range s.versions {
			if j > 0 {
				body = append(body, ',')
			}
			body = append(body, '\n')
			body = append(body, v.jfrag...)
		}
		body = append(body, ']')
	}
	if len(sel) > 0 {
		body = append(body, '\n')
	}
	body = append(body, `},"generated":"`...)
	body = generated.AppendFormat(body, time.RFC3339Nano)
	body = append(body, `","serverInfo":{"contextPath":`...)
	body = append(body, c.jsonContextPath...)
	return append(body, "}}\n"...)
}

// indexEntry is one version in the index: Helm's repo.ChartVersion (the
// metadata inlined, then urls, created, digest) with the same JSON names;
// its other fields are deprecated and omitted when empty, as here.
type indexEntry struct {
	*chart.Metadata
	URLs    []string  `json:"urls"`
	Created time.Time `json:"created"`
	Digest  string    `json:"digest,omitempty"`
}

// renderVersion renders cv as an item of its chart's list under entries,
// indented as Helm's writer indents it.
func renderVersion(cv *chartctl.ChartVersion) []byte {
	y, err := yaml.Marshal([]indexEntry{newEntry(cv)})
	if err != nil {
		// The entry is made of strings, bools, maps and slices decoded
		// from JSON, which always marshal.
		panic(fmt.Sprintf("helmindex: render %s %s: %v", cv.Name, cv.Version, err))
	}
	return indent(y)
}

// renderJSON renders cv as one JSON object: its YAML entry converted, so
// that the JSON index lists exactly what the YAML one does, and so that
// every replica renders the same bytes whether the store handed it the
// stored entry (all IndexEntry gives) or the full record.
func renderJSON(cv *chartctl.ChartVersion) []byte {
	if j := storedJSON(cv); j != nil {
		return j
	}
	return convertJSON(cv)
}

// RenderEntryJSON renders the JSON index's object for cv, whose
// IndexEntry is set (RenderEntry): exactly the bytes a JSON index
// converts that entry to. Store it in cv.IndexEntryJSON so that loading a
// JSON index later parses no YAML. It never returns cv.IndexEntryJSON.
func RenderEntryJSON(cv *chartctl.ChartVersion) []byte { return convertJSON(cv) }

// EntriesJSON converts the stored YAML entries of cvs to their JSON
// objects in one parse, as RenderEntryJSON does one: out[i] for cvs[i], nil
// for a version without a stored entry or whose entry does not convert
// (its index keeps converting it at load). For the backfill of versions
// stored before JSON entries were kept.
func EntriesJSON(cvs []*chartctl.ChartVersion) [][]byte {
	frags, out := make([][]byte, len(cvs)), make([][]byte, len(cvs))
	var idx []int
	for i, cv := range cvs {
		if len(cv.IndexEntry) > 0 {
			frags[len(idx)] = cv.IndexEntry
			idx = append(idx, i)
		}
	}
	conv := make([][]byte, len(idx))
	entriesToJSON(frags[:len(idx)], conv)
	for k, i := range idx {
		out[i] = conv[k]
	}
	return out
}

// convertJSON converts cv's YAML entry (stored, or rendered from its
// record) to its JSON object.
func convertJSON(cv *chartctl.ChartVersion) []byte {
	out := make([][]byte, 1)
	entriesToJSON([][]byte{entry(cv)}, out)
	if out[0] == nil {
		return recordJSON(cv)
	}
	return out[0]
}

// recordJSON renders cv's JSON entry from its record, for a stored entry
// that does not parse (it never should: this package wrote it), so that
// the version is still listed with what the record says.
func recordJSON(cv *chartctl.ChartVersion) []byte {
	b, err := json.Marshal(newEntry(cv))
	if err != nil {
		panic(fmt.Sprintf("helmindex: render %s %s as JSON: %v", cv.Name, cv.Version, err))
	}
	return b
}

// jsonEntry is an index entry as its JSON object is written: Helm's
// repo.ChartVersion fields (indexEntry's, the metadata's inlined) with the
// same names and omitempty rules, declared in the byte order of their
// names. A stored YAML entry was written from a map, whose keys are
// sorted, and yaml.YAMLToJSON (what the JSON index was first converted
// with) writes them sorted again; decoding into this struct and
// json.Marshal writes the same bytes without building maps.
// TestJSONEntryFieldOrder keeps the order, TestFastJSONMatchesYAMLToJSON
// the bytes.
type jsonEntry struct {
	Annotations  map[string]string `yaml:"annotations" json:"annotations,omitempty"`
	APIVersion   string            `yaml:"apiVersion" json:"apiVersion,omitempty"`
	AppVersion   string            `yaml:"appVersion" json:"appVersion,omitempty"`
	Condition    string            `yaml:"condition" json:"condition,omitempty"`
	Created      string            `yaml:"created" json:"created"`
	Dependencies []jsonDependency  `yaml:"dependencies" json:"dependencies,omitempty"`
	Deprecated   bool              `yaml:"deprecated" json:"deprecated,omitempty"`
	Description  string            `yaml:"description" json:"description,omitempty"`
	Digest       string            `yaml:"digest" json:"digest,omitempty"`
	Home         string            `yaml:"home" json:"home,omitempty"`
	Icon         string            `yaml:"icon" json:"icon,omitempty"`
	Keywords     []string          `yaml:"keywords" json:"keywords,omitempty"`
	KubeVersion  string            `yaml:"kubeVersion" json:"kubeVersion,omitempty"`
	Maintainers  []jsonMaintainer  `yaml:"maintainers" json:"maintainers,omitempty"`
	Name         string            `yaml:"name" json:"name,omitempty"`
	Sources      []string          `yaml:"sources" json:"sources,omitempty"`
	Tags         string            `yaml:"tags" json:"tags,omitempty"`
	Type         string            `yaml:"type" json:"type,omitempty"`
	URLs         []string          `yaml:"urls" json:"urls"`
	Version      string            `yaml:"version" json:"version,omitempty"`
}

// jsonMaintainer is chart.Maintainer with its fields in name order.
type jsonMaintainer struct {
	Email string `yaml:"email" json:"email,omitempty"`
	Name  string `yaml:"name" json:"name,omitempty"`
	URL   string `yaml:"url" json:"url,omitempty"`
}

// jsonDependency is chart.Dependency with its fields in name order.
// ImportValues holds strings and {child, parent} maps; an entry with a map
// there takes the generic conversion (maps decode as map[any]any).
type jsonDependency struct {
	Alias        string   `yaml:"alias" json:"alias,omitempty"`
	Condition    string   `yaml:"condition" json:"condition,omitempty"`
	Enabled      bool     `yaml:"enabled" json:"enabled,omitempty"`
	ImportValues []any    `yaml:"import-values" json:"import-values,omitempty"`
	Name         string   `yaml:"name" json:"name"`
	Repository   string   `yaml:"repository" json:"repository"`
	Tags         []string `yaml:"tags" json:"tags,omitempty"`
	Version      string   `yaml:"version" json:"version,omitempty"`
}

// typed reports whether e holds only what json.Marshal writes as the
// generic conversion does (import-values of strings only).
func (e *jsonEntry) typed() bool {
	for _, d := range e.Dependencies {
		for _, v := range d.ImportValues {
			if _, ok := v.(string); !ok {
				return false
			}
		}
	}
	return true
}

// entriesToJSON converts YAML entries (each a one-item list, indented as
// renderVersion writes it) to JSON objects, out[i] for frags[i].
//
// The entries are decoded together, as one YAML list (a parser per entry
// costs as much as the parse), into jsonEntry values and marshalled: a
// few times cheaper than yaml.YAMLToJSON's maps, for the same bytes. A
// batch that does not decode strictly (an unknown field, which an entry
// written by an older renderer could hold) is decoded entry by entry, and
// an entry that still does not, or holds what jsonEntry cannot say
// exactly, takes yaml.YAMLToJSON.
func entriesToJSON(frags, out [][]byte) {
	if len(frags) > 1 {
		size := 0
		for _, f := range frags {
			size += len(f)
		}
		doc := make([]byte, 0, size)
		ok := true
		for _, f := range frags {
			// Each entry must be exactly one list item ending its lines,
			// or the list would not split back into the entries.
			if !bytes.HasPrefix(f, []byte("  - ")) || !bytes.HasSuffix(f, []byte("\n")) {
				ok = false
				break
			}
			doc = append(doc, f...)
		}
		var es []jsonEntry
		if ok && yamlv2.UnmarshalStrict(doc, &es) == nil && len(es) == len(frags) {
			for i := range es {
				out[i] = marshalEntry(&es[i], frags[i])
			}
			return
		}
	}
	for i, f := range frags {
		var es []jsonEntry
		if yamlv2.UnmarshalStrict(f, &es) == nil && len(es) == 1 {
			out[i] = marshalEntry(&es[0], f)
			continue
		}
		out[i] = genericJSON(f)
	}
}

// marshalEntry writes e, decoded from frag, as JSON.
func marshalEntry(e *jsonEntry, frag []byte) []byte {
	if !e.typed() {
		return genericJSON(frag)
	}
	b, err := json.Marshal(e)
	if err != nil {
		// Strings, bools and lists of them always marshal.
		return genericJSON(frag)
	}
	return b
}

// genericJSON converts one YAML entry with yaml.YAMLToJSON, or returns
// nil when it is not a one-item YAML list.
func genericJSON(frag []byte) []byte {
	// The fragment is a one-item YAML list, indented; YAML allows that.
	j, err := yaml.YAMLToJSON(frag)
	if err == nil && len(j) > 2 && j[0] == '[' && j[len(j)-1] == ']' {
		return j[1 : len(j)-1]
	}
	return nil
}

// newEntry is cv's entry of the index.
func newEntry(cv *chartctl.ChartVersion) indexEntry {
	md := new(chart.Metadata)
	if len(cv.Metadata) == 0 || json.Unmarshal(cv.Metadata, md) != nil {
		// A record without usable Chart.yaml metadata still gets an
		// entry Helm can use, from the fields the record keeps.
		md = &chart.Metadata{
			APIVersion:  chart.APIVersionV2,
			Description: cv.Description,
			AppVersion:  cv.AppVersion,
			Keywords:    cv.Keywords,
		}
	}
	md.Name, md.Version = cv.Name, cv.Version
	if _, ok := md.Annotations[SignedByAnnotation]; ok {
		delete(md.Annotations, SignedByAnnotation)
		if len(md.Annotations) == 0 {
			md.Annotations = nil
		}
	}
	if by := cv.Verification.SignedBy(); by != "" {
		if md.Annotations == nil {
			md.Annotations = map[string]string{}
		}
		md.Annotations[SignedByAnnotation] = by
	}
	// Sanitize as Helm does when it adds a chart to an index. Records were
	// validated at upload, so this changes nothing for them; a failure
	// (which Helm's client would skip the entry for) is not ours to hide.
	_ = md.Validate()
	return indexEntry{
		Metadata: md,
		URLs:     []string{"charts/" + chart.ArchiveFileName(cv.Name, cv.Version)},
		Created:  cv.CreatedAt.UTC(),
		Digest:   strings.TrimPrefix(cv.Digest, "sha256:"),
	}
}

// renderJSONKey renders a chart name as a key of entries with the opening
// of its list.
func renderJSONKey(name string) []byte {
	k, err := json.Marshal(name)
	if err != nil {
		panic(fmt.Sprintf("helmindex: render key %q: %v", name, err))
	}
	return append(k, ':', '[')
}

// renderKey renders a chart name as a key under entries, quoted as YAML
// requires (a chart named "true" or "1.0" must stay a string).
func renderKey(name string) []byte {
	y, err := yamlv2.Marshal(map[string]int{name: 0})
	if err != nil {
		panic(fmt.Sprintf("helmindex: render key %q: %v", name, err))
	}
	k := bytes.TrimSuffix(y, []byte(" 0\n"))
	out := make([]byte, 0, len(k)+3)
	out = append(out, "  "...)
	out = append(out, k...)
	return append(out, '\n')
}

// indent indents every non-empty line by two spaces (the depth of a
// chart's list under entries).
func indent(y []byte) []byte {
	out := make([]byte, 0, len(y)+len(y)/8)
	for len(y) > 0 {
		line := y
		if i := bytes.IndexByte(y, '\n'); i >= 0 {
			line = y[:i+1]
		}
		y = y[len(line):]
		if len(line) > 1 {
			out = append(out, "  "...)
		}
		out = append(out, line...)
	}
	return out
}

// yamlKeyLess orders map keys as go.yaml.in/yaml/v2 does when it writes a
// map (keyList.Less for strings): runs of digits compare as numbers,
// letters after other characters. Helm's index lists charts in this order.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al := unicode.IsLetter(ar[i])
		bl := unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
