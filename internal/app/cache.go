package app

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// recordTTL bounds how long a record read from the store is believed
// without reading it again. Changes made through App (uploads, deletes)
// take effect at once; the bound covers changes made to the store behind
// App's back, as the index of another replica would see them.
const recordTTL = time.Second

// recordCacheMax bounds each cache; past it the cache starts over.
const recordCacheMax = 4096

// recordCache keeps records recently read from the store, so that the
// hot reads (every index.yaml and chart download checks the repository,
// every download looks up its version) do not decode them from the store
// each time. Misses are not cached: something new is seen at once. A
// generation counter, bumped by every invalidation, keeps a read that
// raced with a change from storing what it read.
type recordCache[K comparable, V any] struct {
	mu      sync.RWMutex
	gen     uint64
	entries map[K]cachedRecord[V]
	// ttl is how long a record is believed (recordTTL when zero).
	ttl time.Duration
}

type cachedRecord[V any] struct {
	// v is the cache's own copy, never modified once stored (peek hands
	// it out).
	v       *V
	expires time.Time
}

// get returns a copy of the record under k, reading it with load (and
// keeping it) when the cache has none younger than recordTTL.
func (rc *recordCache[K, V]) get(k K, load func() (*V, error)) (*V, error) {
	v, err := rc.peek(k, load)
	if err != nil {
		return nil, err
	}
	cp := *v
	return &cp, nil
}

// peek is get without the copy, for readers on a hot path: the record
// returned is the cache's own copy (of what load returned, when it read
// the record), shared with every other reader, and must not be modified.
func (rc *recordCache[K, V]) peek(k K, load func() (*V, error)) (*V, error) {
	now := time.Now()
	rc.mu.RLock()
	e, ok := rc.entries[k]
	gen := rc.gen
	rc.mu.RUnlock()
	if ok && now.Before(e.expires) {
		return e.v, nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	kept := new(V)
	*kept = *v
	rc.mu.Lock()
	if rc.gen == gen {
		if rc.entries == nil || len(rc.entries) >= recordCacheMax {
			rc.entries = map[K]cachedRecord[V]{}
		}
		ttl := rc.ttl
		if ttl == 0 {
			ttl = recordTTL
		}
		rc.entries[k] = cachedRecord[V]{v: kept, expires: now.Add(ttl)}
	}
	rc.mu.Unlock()
	return kept, nil
}

// forget drops the record under k.
func (rc *recordCache[K, V]) forget(k K) {
	rc.mu.Lock()
	rc.gen++
	delete(rc.entries, k)
	rc.mu.Unlock()
}

// forgetAll drops every record.
func (rc *recordCache[K, V]) forgetAll() {
	rc.mu.Lock()
	rc.gen++
	clear(rc.entries)
	rc.mu.Unlock()
}

// versionKey names one chart version in the cache.
type versionKey struct{ repo, name, version string }

// repository returns the repository named name (a copy of it).
func (a *App) repository(ctx context.Context, name string) (*chartctl.Repository, error) {
	return a.repos.get(name, func() (*chartctl.Repository, error) {
		// Only stored repositories are cached, so a cached name is valid.
		if err := chartctl.ValidateName("repo", name); err != nil {
			return nil, RepoNotFound(name)
		}
		return a.Store.Repository(ctx, name)
	})
}

// ForgetRepository drops what App remembers of the repository named name
// and its chart versions: call it after changing or deleting records
// other than through App, so the change is seen at once.
func (a *App) ForgetRepository(name string) {
	a.repos.forget(name)
	a.search.forget(name)
	a.versions.forgetAll()
	a.repoList.forget()
}

// listCache keeps the list of every repository for at most recordTTL,
// as recordCache keeps single records: the authenticated repository list
// is read far more often than repositories change. Every change App makes
// to a repository drops it (ForgetRepository, CreateRepository), so one
// made on this replica shows at once; one made on another replica shows
// within recordTTL (deletions and updates at once when their notification
// arrives: InvalidateIndex).
type listCache struct {
	mu      sync.Mutex
	gen     uint64
	repos   []*chartctl.Repository
	expires time.Time
}

// get returns the cached list, reading it with load when it is older than
// recordTTL or was dropped.
func (lc *listCache) get(load func() ([]*chartctl.Repository, error)) ([]*chartctl.Repository, error) {
	now := time.Now()
	lc.mu.Lock()
	repos, gen := lc.repos, lc.gen
	fresh := repos != nil && now.Before(lc.expires)
	lc.mu.Unlock()
	if fresh {
		return repos, nil
	}
	repos, err := load()
	if err != nil {
		return nil, err
	}
	if repos == nil {
		repos = []*chartctl.Repository{}
	}
	lc.mu.Lock()
	if lc.gen == gen {
		lc.repos, lc.expires = repos, now.Add(recordTTL)
	}
	lc.mu.Unlock()
	return repos, nil
}

// forget drops the list.
func (lc *listCache) forget() {
	lc.mu.Lock()
	lc.gen++
	lc.repos = nil
	lc.mu.Unlock()
}

// Repositories returns every repository, by name, whatever its visibility
// (the caller filters what its principal may see). The list may be up to
// a second old (recordTTL) unless a repository changed through App. The
// slice and the records are shared by every caller: do not modify them.
func (a *App) Repositories(ctx context.Context) ([]*chartctl.Repository, error) {
	return a.repoList.get(func() ([]*chartctl.Repository, error) { return a.Store.Repositories(ctx) })
}

// Repository returns the repository named name whatever its visibility,
// for protocols that decide access themselves (the OCI registry). Returns
// ENOTFOUND. The record may be up to a second old (recordTTL) unless it
// changed through App.
func (a *App) Repository(ctx context.Context, name string) (*chartctl.Repository, error) {
	r, err := a.repository(ctx, name)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, RepoNotFound(name)
	}
	return r, err
}
