package app

import (
	"context"
	"fmt"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
)

// Each version's JSON index entry is stored with its YAML entry when it
// is written (issue #32), so a JSON index loads without parsing YAML.
// Versions stored before have none: their index converts the YAML entry
// at load until the backfill below, run once per start by one replica at
// a time under a lease, stores it.

// indexJSONLease names the lease the backfill runs under.
const indexJSONLease = "index-json"

// indexJSONLeaseTTL is the lease's time to live, renewed while it runs.
const indexJSONLeaseTTL = time.Minute

// indexJSONRetry is how long a replica waits to try again when another
// one holds the lease (it may stop before it is done).
const indexJSONRetry = 30 * time.Second

// indexJSONBatch is how many versions one store write fills: small
// enough that a write transaction stays short beside uploads, large
// enough that the YAML parse of a batch is shared (helmindex.EntriesJSON).
const indexJSONBatch = 512

// WaitStartDelay waits Config.BackfillDelay, the delay of the start-up
// jobs; it returns false if stop closes first.
func (a *App) WaitStartDelay(stop <-chan struct{}) bool {
	d := a.Config.BackfillDelay
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// untilStop returns a context of parent that also ends when stop closes,
// for background work that runs until the server stops.
func untilStop(parent context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// RunIndexJSONBackfill stores the JSON index entry of every version stored
// without one, in the background, until it is done or stop is closed.
// When another replica holds the lease it tries again after
// indexJSONRetry.
func (a *App) RunIndexJSONBackfill(stop <-chan struct{}) {
	ctx, cancel := untilStop(context.Background(), stop)
	defer cancel()
	if !a.WaitStartDelay(stop) {
		return
	}
	for {
		done, err := a.BackfillIndexJSON(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			a.Logger.Error("store JSON index entries", "err", err)
		} else if done {
			return
		}
		t := time.NewTimer(indexJSONRetry)
		select {
		case <-stop:
		case <-t.C:
		}
		t.Stop()
		if ctx.Err() != nil {
			return
		}
	}
}

// BackfillIndexJSON stores, under the lease, the JSON index entry of every
// version stored with a YAML entry and without a JSON one, a batch per
// write; done is false when another replica holds the lease. A version
// written meanwhile keeps what its writer stored (SetIndexEntriesJSON
// skips an entry that changed). Tests call it.
func (a *App) BackfillIndexJSON(ctx context.Context) (done bool, err error) {
	ok, err := a.Store.AcquireLease(ctx, indexJSONLease, a.Replica, indexJSONLeaseTTL)
	if err != nil || !ok {
		return false, err
	}
	defer func() { _ = a.Store.ReleaseLease(context.WithoutCancel(ctx), indexJSONLease, a.Replica) }()
	renew := a.leaseRenewer(ctx, indexJSONLease, indexJSONLeaseTTL)
	repos, err := a.Store.Repositories(ctx)
	if err != nil {
		return false, err
	}
	stored := 0
	for _, r := range repos {
		n, err := a.backfillRepoIndexJSON(ctx, r.Name, renew)
		stored += n
		if err != nil {
			return false, err
		}
	}
	if stored > 0 {
		a.Logger.Info("stored the JSON index entries of versions stored before", "versions", stored)
	}
	return true, nil
}

// backfillRepoIndexJSON is BackfillIndexJSON for one repository.
func (a *App) backfillRepoIndexJSON(ctx context.Context, repo string, renew func() error) (int, error) {
	cvs, err := a.Store.IndexEntries(ctx, repo)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	var todo []*chartctl.ChartVersion
	for _, cv := range cvs {
		if len(cv.IndexEntry) > 0 && len(cv.IndexEntryJSON) == 0 {
			todo = append(todo, cv)
		}
	}
	stored := 0
	for lo := 0; lo < len(todo); lo += indexJSONBatch {
		if err := renew(); err != nil {
			return stored, err
		}
		batch := todo[lo:min(lo+indexJSONBatch, len(todo))]
		for i, j := range helmindex.EntriesJSON(batch) {
			// nil: the entry does not convert; the index keeps trying
			// at load, as before.
			batch[i].IndexEntryJSON = j
		}
		n, err := a.Store.SetIndexEntriesJSON(ctx, repo, batch)
		stored += n
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return stored, nil // the repository was deleted meanwhile
		} else if err != nil {
			return stored, err
		}
	}
	return stored, nil
}

// leaseRenewer returns a func that a long run under the lease name, held
// for ttl, calls between pieces of work: it renews the lease once a third
// of ttl has passed since the last renewal, and fails when another
// replica has taken it.
func (a *App) leaseRenewer(ctx context.Context, name string, ttl time.Duration) func() error {
	renewed := a.Now()
	return func() error {
		if a.Now().Sub(renewed) < ttl/3 {
			return nil
		}
		ok, err := a.Store.AcquireLease(ctx, name, a.Replica, ttl)
		if err == nil && !ok {
			err = fmt.Errorf("the %s lease was lost", name)
		}
		renewed = a.Now()
		return err
	}
}
