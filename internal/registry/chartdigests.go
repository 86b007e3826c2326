package registry

import (
	"context"
	"sync"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// A chart's OCI name (<repository>/<chart>) serves blobs and manifests no
// OCI push stored: each version's archive and provenance file, its
// derived config, and the derived manifest of a version uploaded over /v1.
// Finding which version has a digest used to read and hash every version
// of the chart, so a request for a digest the chart does not have — the
// HEAD that every push (Helm, oras, crane) sends before each blob and the
// manifest — cost O(versions), and pushing a chart's versions one after
// another O(versions²).
//
// chartDigests keeps, per chart name asked about, every such digest of
// every version, read from the store once and then kept current one
// version at a time by the application layer's change notices
// (app.ChartWatcher: this process's changes, and other replicas' as the
// Helm index hears of them), so a lookup, found or not, is a map read.

// digestKind says what a digest of a chart version is.
type digestKind uint8

const (
	kindArchive digestKind = iota + 1
	kindProvenance
	kindConfig
	kindManifest
)

// versionDigest is one digest of a chart version.
type versionDigest struct {
	version string
	kind    digestKind
}

// maxDigestCharts bounds the charts kept; past it all are forgotten and
// read again when asked about.
const maxDigestCharts = 4096

// chartDigests is the digest index of the charts asked about.
type chartDigests struct {
	watch  sync.Once // registers with the application layer, on first use
	mu     sync.Mutex
	charts map[string]*chartDigestEntry // by OCI name
}

// chartDigestEntry is one chart's digests. mu is held while it loads.
type chartDigestEntry struct {
	mu        sync.Mutex
	loaded    bool
	byDigest  map[string]versionDigest
	byVersion map[string][]string
}

// entry returns the entry of name, created empty if there is none.
func (c *chartDigests) entry(name string) *chartDigestEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.charts[name]
	if e == nil {
		if c.charts == nil || len(c.charts) >= maxDigestCharts {
			c.charts = map[string]*chartDigestEntry{}
		}
		e = &chartDigestEntry{}
		c.charts[name] = e
	}
	return e
}

// lookup returns the version of the chart name that has digest d, and
// what d is of it; ok is false when no version has it.
func (c *chartDigests) lookup(ctx context.Context, r *Registry, name, d string) (v versionDigest, ok bool, err error) {
	// Changes are heard of from before the first entry is read on.
	c.watch.Do(func() { r.App.WatchCharts(watcher{c, r}) })
	e := c.entry(name)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.loaded {
		cvs, err := r.chartVersions(ctx, name)
		if err != nil {
			return v, false, err
		}
		e.byDigest, e.byVersion = map[string]versionDigest{}, map[string][]string{}
		for _, cv := range cvs {
			if err := e.add(ctx, r, name, cv); err != nil {
				return v, false, err
			}
		}
		e.loaded = true
	}
	v, ok = e.byDigest[d]
	return v, ok, nil
}

// add indexes the digests of cv in e.
func (e *chartDigestEntry) add(ctx context.Context, r *Registry, name string, cv *chartctl.ChartVersion) error {
	m, _, err := r.deriveManifest(ctx, name, cv)
	if err != nil {
		return err
	}
	ds := []versionDigest{{cv.Version, kindArchive}, {cv.Version, kindConfig}, {cv.Version, kindManifest}}
	keys := []string{cv.Digest, configDigest(cv), m.Digest}
	if cv.ProvDigest != "" {
		ds, keys = append(ds, versionDigest{cv.Version, kindProvenance}), append(keys, cv.ProvDigest)
	}
	for i, k := range keys {
		e.byDigest[k] = ds[i]
	}
	e.byVersion[cv.Version] = keys
	return nil
}

// remove drops the digests of version from e.
func (e *chartDigestEntry) remove(version string) {
	for _, k := range e.byVersion[version] {
		if e.byDigest[k].version == version {
			delete(e.byDigest, k)
		}
	}
	delete(e.byVersion, version)
}

// watcher is the app.ChartWatcher of a registry's chart digest index.
type watcher struct {
	c *chartDigests
	r *Registry
}

// ChartVersionChanged implements app.ChartWatcher: the entry of the
// version's chart, if loaded, is made to match the store.
func (w watcher) ChartVersionChanged(ctx context.Context, repo, name, version string) {
	c, ociName := w.c, repo+"/"+name
	c.mu.Lock()
	e := c.charts[ociName]
	c.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.loaded {
		return
	}
	e.remove(version)
	// Through the application's record cache, which forgot the version
	// before telling its watchers: this read is the store's, and the
	// requests that follow a push (the manifest's GET, its tag's PUT)
	// find the record it keeps.
	cv, err := w.r.App.SharedChartVersion(ctx, repo, name, version)
	if err == nil {
		err = e.add(ctx, w.r, ociName, cv)
	}
	if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		// Read again, whole, when next asked.
		e.loaded = false
	}
}

// RepositoryChanged implements app.ChartWatcher: the entries of the
// repository's charts are forgotten.
func (w watcher) RepositoryChanged(repo string) {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.charts {
		if repoOf(name) == repo {
			delete(c.charts, name)
		}
	}
}
