package app

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
)

// diffCacheBytes bounds the memory the diff cache keeps (the unified text
// of its entries, which is most of it).
const diffCacheBytes = 32 << 20

// ChartDiff is a diff of two chart versions and the versions compared.
type ChartDiff struct {
	From, To *chartctl.ChartVersion
	*chartdiff.Result
}

// DiffCharts compares version from of chart name in repo with version to
// of the same chart in toRepo ("" for repo), for p, who must be able to
// read both repositories: one p cannot see is ENOTFOUND before any scope
// is checked, as everywhere (ReadableRepo). Unknown versions are
// ENOTFOUND. The result is computed on demand and kept in a bounded LRU
// cache keyed by the two archives' digests, so the same pair in other
// repositories is computed once.
func (a *App) DiffCharts(ctx context.Context, p *chartctl.Principal, repo, name, from, to, toRepo string) (*ChartDiff, error) {
	r1, err := a.ReadableRepo(ctx, p, repo)
	if err != nil {
		return nil, err
	}
	r2 := r1
	if toRepo != "" && toRepo != repo {
		if r2, err = a.ReadableRepo(ctx, p, toRepo); err != nil {
			return nil, err
		}
	}
	cv1, err := a.ChartVersion(ctx, r1, name, from)
	if err != nil {
		return nil, err
	}
	cv2, err := a.ChartVersion(ctx, r2, name, to)
	if err != nil {
		return nil, err
	}
	key := diffKey{cv1.Digest, cv2.Digest}
	if res, ok := a.diffs.get(key); ok {
		return &ChartDiff{From: cv1, To: cv2, Result: res}, nil
	}
	f1, err := a.chartFiles(ctx, cv1)
	if err != nil {
		return nil, err
	}
	f2, err := a.chartFiles(ctx, cv2)
	if err != nil {
		return nil, err
	}
	res := chartdiff.Compare(f1, f2)
	rendered, renderErr, final := a.diffRendered(ctx, cv1, cv2)
	res = res.WithRendered(rendered, renderErr)
	if final {
		a.diffs.put(key, res)
	}
	return &ChartDiff{From: cv1, To: cv2, Result: res}, nil
}

// diffRendered diffs the manifests both versions render with their
// default values as rendered/… entries: those the images job kept for
// each archive (keptRendering), else rendered now (Render, the two at
// once). A version that cannot be rendered gives no entries and the
// reason; final is false when the renderer could not run at all, so the
// answer is not cached and a later request tries again.
func (a *App) diffRendered(ctx context.Context, from, to *chartctl.ChartVersion) (rendered []chartdiff.FileDiff, renderErr string, final bool) {
	var r [2]*chartdiff.Rendering
	var errs [2]error
	var wg sync.WaitGroup
	for i, cv := range []*chartctl.ChartVersion{from, to} {
		if r[i] = a.keptRendering(ctx, cv); r[i] != nil {
			continue
		}
		if a.Render == nil {
			return nil, "This server renders no manifests: chartctl-lint is not installed next to chartctl.", true
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r[i], errs[i] = a.renderVersion(ctx, cv)
		}()
	}
	wg.Wait()
	for i, cv := range []*chartctl.ChartVersion{from, to} {
		if errs[i] != nil {
			a.Logger.Warn("render chart for a diff", "repository", cv.Repository, "chart", cv.Name, "version", cv.Version, "err", errs[i])
			return nil, "The rendered manifests are not available right now; ask again later.", false
		}
		if r[i].Unrenderable != "" {
			return nil, fmt.Sprintf("Version %s cannot be rendered with its default values: %s", cv.Version, r[i].Unrenderable), true
		}
	}
	return chartdiff.CompareRendered(r[0].Manifests, r[1].Manifests), "", true
}

// chartFiles reads the files of a stored version's archive.
func (a *App) chartFiles(ctx context.Context, cv *chartctl.ChartVersion) (chartdiff.Files, error) {
	b, err := a.ReadBlob(ctx, cv.Digest)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	// The archive was valid when stored; one that no longer reads is the
	// store's fault, reported as such and not as the caller's.
	return chartdiff.ReadFiles(b, a.Config.ChartLimits)
}

type diffKey struct{ from, to string }

// diffCache is an LRU of diff results bounded by their size in bytes.
type diffCache struct {
	mu      sync.Mutex
	order   list.List // of *diffEntry, most recently used first
	entries map[diffKey]*list.Element
	bytes   int
}

type diffEntry struct {
	key  diffKey
	res  *chartdiff.Result
	size int
}

func (c *diffCache) get(k diffKey) (*chartdiff.Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*diffEntry).res, true
}

func (c *diffCache) put(k diffKey, res *chartdiff.Result) {
	size := 0
	for _, f := range res.Files {
		size += len(f.Path) + len(f.Diff) + 64
	}
	if size > diffCacheBytes/4 {
		// One huge diff would evict everything else for little gain.
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[diffKey]*list.Element{}
	}
	if _, ok := c.entries[k]; ok {
		return
	}
	c.entries[k] = c.order.PushFront(&diffEntry{key: k, res: res, size: size})
	c.bytes += size
	for c.bytes > diffCacheBytes {
		last := c.order.Back()
		e := last.Value.(*diffEntry)
		c.order.Remove(last)
		delete(c.entries, e.key)
		c.bytes -= e.size
	}
}
