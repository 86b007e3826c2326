package app

import (
	"context"
	"time"

	"github.com/chartctl/chartctl/internal/chartsearch"
)

// searchTTL bounds how long a repository's search candidates are
// believed without reading them again. Every change App makes or hears of
// from another replica (versionChanged, repositoryChanged) drops them at
// once; the bound covers the rest, as recordTTL does for records.
const searchTTL = 5 * time.Second

// SearchCandidates returns repo's text search candidates
// (chartsearch.Candidates), from memory while nothing changed: reading
// them decodes the newest record of every chart, 2,000 of them in a
// repository of 100,000 versions, which made a search cost ~28 ms there
// (docs/performance.md). The versions are shared: callers must not change
// them.
func (a *App) SearchCandidates(ctx context.Context, repo string) ([]*chartsearch.Candidate, error) {
	cands, err := a.search.get(repo, func() (*[]*chartsearch.Candidate, error) {
		cs, err := chartsearch.TextCandidates(ctx, a.Store, repo)
		return &cs, err
	})
	if err != nil {
		return nil, err
	}
	return *cands, nil
}
