package app

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartsearch"
)

// searchTTL bounds how long a repository's search candidates are
// believed without reading them again. Every change App makes or hears of
// from another replica (versionChanged, repositoryChanged) drops them at
// once; the bound covers the rest, as recordTTL does for records.
const searchTTL = 5 * time.Second

// searchCache keeps each repository's search candidates
// (chartsearch.TextCandidates): reading them decodes the newest record of
// every chart, 2,000 of them in a repository of 100,000 versions, which
// made a search cost ~28 ms there (docs/performance.md).
type searchCache struct {
	mu sync.Mutex
	// gen counts drops per repository, so a read that raced with a
	// change does not keep what it read.
	gen     map[string]uint64
	entries map[string]searchEntry
}

type searchEntry struct {
	cands   []*chartsearch.Candidate
	expires time.Time
}

// SearchCandidates returns repo's text search candidates
// (chartsearch.Candidates), from memory while nothing changed. The
// versions are shared: callers must not change them.
func (a *App) SearchCandidates(ctx context.Context, repo string) ([]*chartsearch.Candidate, error) {
	c := &a.search
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[repo]
	gen := c.gen[repo]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.cands, nil
	}
	cands, err := chartsearch.TextCandidates(ctx, a.Store, repo)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen[repo] == gen {
		if c.entries == nil {
			c.entries = map[string]searchEntry{}
		}
		c.entries[repo] = searchEntry{cands: cands, expires: now.Add(searchTTL)}
	}
	c.mu.Unlock()
	return cands, nil
}

// forget drops repo's candidates.
func (c *searchCache) forget(repo string) {
	c.mu.Lock()
	if c.gen == nil {
		c.gen = map[string]uint64{}
	}
	c.gen[repo]++
	delete(c.entries, repo)
	c.mu.Unlock()
}
