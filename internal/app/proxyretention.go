package app

import (
	"context"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file is proxy retention (CONTRACT §18 decision 16): a version a
// proxy repository cached and nobody used for the repository's
// proxy.retention (default 30d) is dropped, and fetched again from the
// upstream if it is asked for later.
//
// "Used" is a fill or a pull of the archive by any protocol: Helm's
// charts/*.tgz, /v1's …/download and the OCI registry's chart layer all
// count a download (CountDownload), and a fill records one at the time it
// stores the version (MarkProxyFilled), so a freshly cached version is
// never taken for an old one. Reading an index, a manifest or a version's
// metadata does not count: what retention keeps is the bytes people pull.
//
// The sweep runs on one replica at a time (the lease ProxyRetentionLease)
// every ProxyRetentionInterval. An eviction is a cache operation, not a
// deletion of content: it is audited (chart.evict, actor "proxy") but
// sends no chart.deleted event, so webhooks and replication do not treat
// it as a chart someone deleted. Repository retention policies do not
// apply to proxies (they are read-only, SetRetention refuses them), and a
// proxy's cache is not counted by quotas (decision 12).

// ProxyRetentionLease is the lease a replica holds while it sweeps the
// proxy caches.
const ProxyRetentionLease = "proxy-retention"

// ProxyRetentionInterval is how often each replica tries to sweep.
const ProxyRetentionInterval = time.Hour

// MarkProxyFilled records that a proxy fill stored name version in r now:
// its last use, as a download without a count, so retention counts from
// the fill.
func (a *App) MarkProxyFilled(ctx context.Context, r *chartctl.Repository, name, version string) error {
	err := a.Store.AddDownloads(ctx, []chartctl.DownloadCount{{Repository: r.Name, Name: name, Version: version, Last: a.Now().UTC()}})
	a.versions.forget(versionKey{r.Name, name, version})
	return err
}

// RunProxyRetention sweeps the proxy caches every ProxyRetentionInterval
// until stop closes (one replica per sweep).
func (a *App) RunProxyRetention(stop <-chan struct{}) {
	t := time.NewTicker(ProxyRetentionInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if _, err := a.SweepProxyCaches(context.Background()); err != nil {
			a.Logger.Error("proxy retention sweep", "err", err)
		}
	}
}

// ProxyEviction is a version a proxy retention sweep dropped.
type ProxyEviction struct {
	Repository, Name, Version string
	// LastUsed is the version's last fill or pull.
	LastUsed time.Time
}

// SweepProxyCaches evicts, from every proxy repository, the cached
// versions not used for the repository's retention, under the lease
// ProxyRetentionLease (with the lease held elsewhere it does nothing and
// returns nil). A proxy whose upstream this replica last found
// unreachable is left alone: what it cached is all it can serve.
func (a *App) SweepProxyCaches(ctx context.Context) ([]ProxyEviction, error) {
	ok, err := a.Store.AcquireLease(ctx, ProxyRetentionLease, a.Replica, RetentionLeaseTTL)
	if err != nil || !ok {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if err := a.Store.ReleaseLease(context.WithoutCancel(ctx), ProxyRetentionLease, a.Replica); err != nil {
			a.Logger.Error("release proxy retention lease", "err", err)
		}
	}()
	// Stopped before the lease is released (defers run last first).
	lost, stopKeeping := a.keepLease(runCtx, cancel, ProxyRetentionLease)
	defer stopKeeping()
	// Pulls counted but not yet written would look like no use.
	if err := a.FlushDownloads(runCtx); err != nil {
		return nil, err
	}
	repos, err := a.Store.Repositories(runCtx)
	if err != nil {
		return nil, err
	}
	var out []ProxyEviction
	for _, r := range repos {
		if r.Proxy == nil {
			continue
		}
		if a.ProxyStats(r).UpstreamStatus == "unreachable" {
			a.Logger.Info("proxy retention: upstream unreachable, keeping the cache", "repository", r.Name)
			continue
		}
		ev, err := a.sweepProxy(runCtx, r)
		out = append(out, ev...)
		if lost() {
			a.Logger.Warn("proxy retention sweep stopped: its lease passed to another replica", "evicted", len(out))
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	if len(out) > 0 {
		a.Logger.Info("proxy retention sweep", "evicted", len(out))
	}
	return out, nil
}

// sweepProxy evicts r's cached versions last used before its retention.
func (a *App) sweepProxy(ctx context.Context, r *chartctl.Repository) ([]ProxyEviction, error) {
	cvs, err := a.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{IncludeHeld: true})
	if err != nil {
		return nil, err
	}
	now := a.Now().UTC()
	cutoff := now.Add(-r.Proxy.EffectiveRetention())
	var (
		out     []ProxyEviction
		unknown []chartctl.DownloadCount
	)
	for _, cv := range cvs {
		if cv.LastDownloadedAt == nil {
			// Cached before fills were recorded (an upgraded data dir):
			// its retention starts now, not at the upstream's creation
			// date, which may be years ago.
			unknown = append(unknown, chartctl.DownloadCount{Repository: r.Name, Name: cv.Name, Version: cv.Version, Last: now})
			continue
		}
		if !cv.LastDownloadedAt.Before(cutoff) {
			continue
		}
		if err := a.evictProxied(ctx, r, cv); err != nil {
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				continue // purged meanwhile
			}
			return out, err
		}
		out = append(out, ProxyEviction{Repository: r.Name, Name: cv.Name, Version: cv.Version, LastUsed: *cv.LastDownloadedAt})
	}
	if len(unknown) > 0 {
		if err := a.Store.AddDownloads(ctx, unknown); err != nil {
			return out, err
		}
		for _, u := range unknown {
			a.versions.forget(versionKey{u.Repository, u.Name, u.Version})
		}
	}
	return out, nil
}

// evictProxied deletes the cached version cv of the proxy r, audited as
// chart.evict by the proxy, without a chart.deleted event.
func (a *App) evictProxied(ctx context.Context, r *chartctl.Repository, cv *chartctl.ChartVersion) error {
	actx := chartctl.WithActor(ctx, &chartctl.Actor{CredentialKind: chartctl.CredentialProxy})
	rctx := a.Record(actx, "chart.evict", ChartTarget(r.Name, cv.Name, cv.Version), r.Organization)
	_, orphans, err := a.Store.DeleteChartVersion(rctx, r.Name, cv.Name, cv.Version)
	if err != nil {
		return err
	}
	a.Committed()
	a.versions.forget(versionKey{r.Name, cv.Name, cv.Version})
	a.versionChanged(context.WithoutCancel(ctx), r.Name, cv.Name, cv.Version)
	for _, d := range orphans {
		a.DeleteIfOrphan(ctx, d)
	}
	return nil
}
