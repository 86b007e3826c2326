package app

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file counts downloads. A download only adds one to an atomic
// counter in memory (a lock-free map lookup and an add: no lock, no
// clock, no allocation once the version has been seen); the counters are
// written in one batch every few seconds (and at shutdown), so the hot
// path of charts/*.tgz never waits for a write. A batch's downloads are
// dated at the flush, which is precise enough for "downloaded within D
// days".

type downloadKey struct{ repo, name, version string }

type downloadCounter struct {
	// counts maps downloadKey to *atomic.Int64. Entries stay (one per
	// version downloaded since start), so an increment never races a
	// removal.
	counts sync.Map
}

// CountDownload records one download of a chart version's archive by any
// protocol (the Helm repository, /v1, the OCI registry).
func (a *App) CountDownload(repo, name, version string) {
	k := downloadKey{repo, name, version}
	v, ok := a.downloads.counts.Load(k)
	if !ok {
		v, _ = a.downloads.counts.LoadOrStore(k, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// FlushDownloads writes the counted downloads to the store in one write.
// On failure the counts are put back for the next flush.
func (a *App) FlushDownloads(ctx context.Context) error {
	now := a.Now().UTC()
	var (
		batch    []chartctl.DownloadCount
		counters []*atomic.Int64
	)
	a.downloads.counts.Range(func(k, v any) bool {
		c := v.(*atomic.Int64)
		if n := c.Swap(0); n > 0 {
			key := k.(downloadKey)
			batch = append(batch, chartctl.DownloadCount{Repository: key.repo, Name: key.name, Version: key.version, Count: n, Last: now})
			counters = append(counters, c)
		}
		return true
	})
	if len(batch) == 0 {
		return nil
	}
	if err := a.Store.AddDownloads(ctx, batch); err != nil {
		for i, c := range counters {
			c.Add(batch[i].Count)
		}
		return err
	}
	// The cached records now lag the counters: read them afresh.
	for _, c := range batch {
		a.versions.forget(versionKey{c.Repository, c.Name, c.Version})
	}
	return nil
}

// RunDownloadFlusher flushes the download counters every interval until
// stop closes, then once more.
func (a *App) RunDownloadFlusher(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := a.FlushDownloads(context.Background()); err != nil {
				a.Logger.Error("flush download counters", "err", err)
			}
		case <-stop:
			if err := a.FlushDownloads(context.Background()); err != nil {
				a.Logger.Error("flush download counters", "err", err)
			}
			return
		}
	}
}
