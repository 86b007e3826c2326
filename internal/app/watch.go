package app

import (
	"context"
	"sync"
)

// ChartWatcher is told of every change to chart versions this process
// makes or hears of from another replica, after the store has it, so that
// it can keep a view of them current (as the Helm index is kept).
type ChartWatcher interface {
	// ChartVersionChanged: one version was stored, overwritten or
	// deleted; read the store for its state.
	ChartVersionChanged(ctx context.Context, repo, name, version string)
	// RepositoryChanged: anything in repo may have changed (it was
	// deleted, or another replica changed it in ways not known one by
	// one); forget what is known of it.
	RepositoryChanged(repo string)
}

// watchers are the registered ChartWatchers.
type watchers struct {
	mu   sync.RWMutex
	list []ChartWatcher
}

// WatchCharts registers w for every later change.
func (a *App) WatchCharts(w ChartWatcher) {
	a.watchers.mu.Lock()
	a.watchers.list = append(a.watchers.list, w)
	a.watchers.mu.Unlock()
}

// versionChanged brings the Helm index and the watchers up to date with
// one version's state in the store.
func (a *App) versionChanged(ctx context.Context, repo, name, version string) {
	a.Index.Refresh(ctx, repo, name, version)
	a.indexKeepChanged(repo)
	a.search.forget(repo)
	a.watchers.mu.RLock()
	defer a.watchers.mu.RUnlock()
	for _, w := range a.watchers.list {
		w.ChartVersionChanged(ctx, repo, name, version)
	}
}

// repositoryChanged drops what the Helm index and the watchers know of
// repo.
func (a *App) repositoryChanged(repo string) {
	a.Index.Drop(repo)
	a.indexKeepChanged(repo)
	a.search.forget(repo)
	a.watchers.mu.RLock()
	defer a.watchers.mu.RUnlock()
	for _, w := range a.watchers.list {
		w.RepositoryChanged(repo)
	}
}
