package app

import (
	"context"
	"runtime/debug"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
)

// The index keeper keeps the snapshot of a large repository's full Helm
// index current (helmindex.Cache.Keep), so that the first index.yaml
// after a restart is answered from it instead of a load of every version
// (issue #32: 100,000 versions load in about 4–5 s). A repository is
// kept once its changes pause for IndexKeepQuiet, at most once per
// indexKeepSpacing times what its last keep took (so a repository pushed
// to all day spends a tenth of a CPU on it at most), and, when the
// server stops, once more if it changed since: the next process starts
// from a current snapshot.
//
// Keeping needs Config.IndexCacheDir. Only indexes whose gzip form
// reaches helmindex.DiskMin are written: a smaller repository costs the
// keeper one read of its versions (milliseconds) and no file. Proxy
// repositories, whose index is the upstream's, are not kept.

// DefaultIndexKeepQuiet is how long a repository's changes must pause
// before its index snapshot is written, when Config.IndexKeepQuiet is 0.
const DefaultIndexKeepQuiet = time.Second

// indexKeepSpacing: the time between two keeps of one repository is at
// least this many times the first one took.
const indexKeepSpacing = 10

// indexKeepFreeMemory is the size of a kept index from which the keeper
// returns the memory its read took to the system at once.
const indexKeepFreeMemory = 16 << 20

// indexKeepAtStop bounds the keeps a stopping server makes, the one under
// way when it is told to stop included (a keep stops at its next step).
const indexKeepAtStop = 20 * time.Second

// indexKeeper is the keeper's schedule.
type indexKeeper struct {
	mu sync.Mutex
	// changed is each repository changed since its last keep, with the
	// time of its last change; notBefore the time a repository may be
	// kept again (the spacing), until it passes.
	changed   map[string]time.Time
	notBefore map[string]time.Time
	wake      chan struct{} // made by New
}

// indexKeepChanged tells the keeper that repo's versions changed.
func (a *App) indexKeepChanged(repo string) {
	if a.Config.IndexCacheDir == "" {
		return
	}
	k := &a.keeper
	k.mu.Lock()
	if k.changed == nil {
		k.changed = map[string]time.Time{}
	}
	k.changed[repo] = a.Now()
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// due is when repo, changed at changed, is next kept. k.mu is held.
func (k *indexKeeper) due(repo string, changed time.Time, quiet time.Duration) time.Time {
	d := changed.Add(quiet)
	if nb := k.notBefore[repo]; nb.After(d) {
		return nb
	}
	return d
}

// next returns the changed repository due first and when it is due; ""
// when none changed.
func (k *indexKeeper) next(quiet time.Duration) (string, time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var repo string
	var at time.Time
	for name, changed := range k.changed {
		if d := k.due(name, changed, quiet); repo == "" || d.Before(at) {
			repo, at = name, d
		}
	}
	return repo, at
}

// take removes repo from the changed ones if it is due at now, and says
// whether it was.
func (k *indexKeeper) take(repo string, quiet time.Duration, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	changed, ok := k.changed[repo]
	if !ok || k.due(repo, changed, quiet).After(now) {
		return false
	}
	delete(k.changed, repo)
	return true
}

// kept records that repo was kept at now, taking took: it is not kept
// again before now + indexKeepSpacing × took.
func (k *indexKeeper) kept(repo string, now time.Time, took time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.notBefore == nil {
		k.notBefore = map[string]time.Time{}
	}
	for name, t := range k.notBefore {
		if !t.After(now) {
			delete(k.notBefore, name)
		}
	}
	if took > 0 {
		k.notBefore[repo] = now.Add(indexKeepSpacing * took)
	}
}

// RunIndexKeeper keeps the index snapshots of changed repositories
// current until stop is closed, and then keeps those changed since their
// last keep (bounded by indexKeepAtStop) before it returns. Without
// Config.IndexCacheDir nothing changes and it only waits for stop.
func (a *App) RunIndexKeeper(stop <-chan struct{}) {
	quiet := a.Config.IndexKeepQuiet
	if quiet <= 0 {
		quiet = DefaultIndexKeepQuiet
	}
	// A keep under way when stop closes, and the keeps of keepAll, have
	// indexKeepAtStop from then on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
			return
		}
		t := time.NewTimer(indexKeepAtStop)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		repo, at := a.keeper.next(quiet)
		var timer *time.Timer
		var fired <-chan time.Time
		if repo != "" {
			timer = time.NewTimer(max(0, at.Sub(a.Now())))
			fired = timer.C
		}
		select {
		case <-stop:
			a.keepAll(ctx)
			return
		case <-a.keeper.wake:
		case <-fired:
			if a.keeper.take(repo, quiet, a.Now()) {
				took := a.keepIndex(ctx, repo)
				a.keeper.kept(repo, a.Now(), took)
			}
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// keepAll keeps every repository changed since its last keep, as a
// stopping server does, until ctx ends.
func (a *App) keepAll(ctx context.Context) {
	a.keeper.mu.Lock()
	repos := make([]string, 0, len(a.keeper.changed))
	for name := range a.keeper.changed {
		repos = append(repos, name)
	}
	a.keeper.changed = nil
	a.keeper.mu.Unlock()
	for _, repo := range repos {
		if ctx.Err() != nil {
			return
		}
		a.keepIndex(ctx, repo)
	}
}

// keepIndex keeps repo's index snapshot, if its repository is one to
// keep, and returns how long that took. Errors are logged: a snapshot
// only spares a load.
func (a *App) keepIndex(ctx context.Context, repo string) time.Duration {
	start := time.Now()
	r, err := a.Store.Repository(ctx, repo)
	if err != nil || r.Proxy != nil {
		return 0
	}
	kept, err := a.Index.Keep(ctx, repo, helmindex.FormatOf(r.IndexFormat))
	if err != nil {
		if ctx.Err() == nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			a.Logger.Error("keep index snapshot", "repository", repo, "err", err)
		}
		return time.Since(start)
	}
	if kept >= indexKeepFreeMemory {
		// The versions read and the index rendered are garbage now,
		// several times the index's size, which the runtime would
		// otherwise hand back to the system only slowly.
		debug.FreeOSMemory()
	}
	if kept > 0 {
		a.Logger.Debug("kept index snapshot", "repository", repo, "took", time.Since(start).Round(time.Millisecond))
	}
	return time.Since(start)
}
