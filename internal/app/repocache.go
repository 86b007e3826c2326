package app

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// repoTTL bounds how long a repository record read from the store is
// believed without reading it again. Changes made through App (deleting a
// repository) take effect at once; the bound covers changes made to the
// store behind App's back, as the index of another replica would see them.
const repoTTL = time.Second

// repoCache keeps recently read repository records, so that reads of hot
// repositories (every index.yaml and chart download checks visibility)
// do not decode the record from the store each time. Unknown names are
// not cached. A generation counter, bumped by every invalidation, keeps a
// read that raced with a change from storing what it read.
type repoCache struct {
	mu      sync.RWMutex
	gen     uint64
	entries map[string]repoEntry
}

type repoEntry struct {
	r       chartctl.Repository
	expires time.Time
}

// repoCacheMax bounds the cache; past it the cache starts over.
const repoCacheMax = 4096

// repository returns the repository named name from the cache, or from
// the store (then cached). The caller gets its own copy.
func (a *App) repository(ctx context.Context, name string) (*chartctl.Repository, error) {
	now := time.Now()
	rc := &a.repos
	rc.mu.RLock()
	e, ok := rc.entries[name]
	gen := rc.gen
	rc.mu.RUnlock()
	if ok && now.Before(e.expires) {
		r := e.r
		return &r, nil
	}
	r, err := a.Store.Repository(ctx, name)
	if err != nil {
		return nil, err
	}
	rc.mu.Lock()
	if rc.gen == gen {
		if rc.entries == nil || len(rc.entries) >= repoCacheMax {
			rc.entries = map[string]repoEntry{}
		}
		rc.entries[name] = repoEntry{r: *r, expires: now.Add(repoTTL)}
	}
	rc.mu.Unlock()
	return r, nil
}

// ForgetRepository drops what App remembers of the repository named name:
// call it after changing or deleting the repository's record other than
// through App, so the change is seen at once.
func (a *App) ForgetRepository(name string) {
	rc := &a.repos
	rc.mu.Lock()
	rc.gen++
	delete(rc.entries, name)
	rc.mu.Unlock()
}
