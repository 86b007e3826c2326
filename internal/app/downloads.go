package app

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file counts downloads. A download only bumps a counter in memory;
// the counters are written in one batch every few seconds (and at
// shutdown), so the hot path of charts/*.tgz never waits for a write.

type downloadKey struct{ repo, name, version string }

type downloadCounter struct {
	mu     sync.Mutex
	counts map[downloadKey]*chartctl.DownloadCount
}

// CountDownload records one download of a chart version's archive by any
// protocol (the Helm repository, /v1, the OCI registry).
func (a *App) CountDownload(repo, name, version string) {
	now := a.Now()
	d := &a.downloads
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.counts == nil {
		d.counts = map[downloadKey]*chartctl.DownloadCount{}
	}
	k := downloadKey{repo, name, version}
	c := d.counts[k]
	if c == nil {
		c = &chartctl.DownloadCount{Repository: repo, Name: name, Version: version}
		d.counts[k] = c
	}
	c.Count++
	c.Last = now
}

// FlushDownloads writes the counted downloads to the store in one write.
// On failure the counts are kept for the next flush.
func (a *App) FlushDownloads(ctx context.Context) error {
	d := &a.downloads
	d.mu.Lock()
	pending := d.counts
	d.counts = nil
	d.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	batch := make([]chartctl.DownloadCount, 0, len(pending))
	for _, c := range pending {
		batch = append(batch, *c)
	}
	if err := a.Store.AddDownloads(ctx, batch); err != nil {
		d.mu.Lock()
		for _, c := range batch {
			k := downloadKey{c.Repository, c.Name, c.Version}
			if cur := d.counts[k]; cur != nil {
				cur.Count += c.Count
				if c.Last.After(cur.Last) {
					cur.Last = c.Last
				}
			} else {
				if d.counts == nil {
					d.counts = map[downloadKey]*chartctl.DownloadCount{}
				}
				cc := c
				d.counts[k] = &cc
			}
		}
		d.mu.Unlock()
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
