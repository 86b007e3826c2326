package app

import (
	"context"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
)

// ChartNotFound is the ENOTFOUND error for a chart (version "") or one of
// its versions in repo.
func ChartNotFound(repo, name, version string) error {
	if version == "" {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q not found in repository %q.", name, repo)
	}
	return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q version %q not found in repository %q.", name, version, repo)
}

// ChartVersion returns one version of a chart in r (which the caller has
// already been allowed to read). Invalid names and versions are ENOTFOUND.
func (a *App) ChartVersion(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
		return nil, ChartNotFound(r.Name, name, version)
	}
	cv, err := a.Store.ChartVersion(ctx, r.Name, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, ChartNotFound(r.Name, name, version)
	}
	return cv, err
}

// PutOptions modify PutChart.
type PutOptions struct {
	// Force asks to replace a stored version with other content; it takes
	// effect only when the server allows overwriting.
	Force bool
	// CreatedAt, when set, is the version's creation time instead of now
	// (an import keeping the source's time; see CheckCreatedAt).
	CreatedAt time.Time
}

// PutChart commits u as a chart version of r, whose write access the
// caller has checked (WritableRepo). Blobs are made durable before the
// metadata transaction that refers to them, all under the digests' locks
// so no orphan sweep can remove them between. An identical re-upload
// returns the stored record and created=false; other content for a stored
// version is ECONFLICT unless forced on a server that allows overwriting.
// PutChart always consumes u.
func (a *App) PutChart(ctx context.Context, r *chartctl.Repository, u *Upload, opts PutOptions) (stored *chartctl.ChartVersion, created bool, err error) {
	overwrite := opts.Force && a.Config.AllowOverwrite
	stored, created, err = a.commit(ctx, r, u, overwrite, opts.CreatedAt)
	a.observeUpload(created, err)
	if chartctl.ErrorCode(err) == chartctl.ECONFLICT && opts.Force && !a.Config.AllowOverwrite {
		return nil, false, chartctl.Errorf(chartctl.ECONFLICT, "%s This server does not allow overwriting (start it with --allow-overwrite).", chartctl.ErrorMessage(err))
	}
	return stored, created, err
}

// Reject discards u, refused for err before PutChart, and returns err.
func (a *App) Reject(u *Upload, err error) error {
	u.Abort()
	a.observeUpload(false, err)
	return err
}

func (a *App) commit(ctx context.Context, repo *chartctl.Repository, u *Upload, overwrite bool, createdAt time.Time) (*chartctl.ChartVersion, bool, error) {
	defer u.Abort()
	digests := []string{u.blob.Digest()}
	if u.prov != nil {
		digests = append(digests, u.prov.Digest())
	}
	cv := &chartctl.ChartVersion{
		Repository: repo.Name, Name: u.Chart.Name, Version: u.Chart.Version, AppVersion: u.Chart.AppVersion,
		Description: u.Chart.Description, Keywords: u.Chart.Keywords, Size: u.blob.Size(),
		CreatedAt: a.Now().UTC(), Metadata: u.Chart.MetadataJSON,
	}
	if !createdAt.IsZero() {
		cv.CreatedAt = createdAt.UTC()
	}
	stored, created, orphans, err := func() (*chartctl.ChartVersion, bool, []string, error) {
		unlock := a.locks.lockAll(digests)
		defer unlock()
		d, err := u.blob.Commit()
		if err != nil {
			return nil, false, nil, err
		}
		cv.Digest = d
		if u.prov != nil {
			if cv.ProvDigest, err = u.prov.Commit(); err != nil {
				return nil, false, nil, err
			}
		}
		cv.IndexEntry = helmindex.RenderEntry(cv)
		return a.Store.PutChartVersion(ctx, cv, overwrite)
	}()
	if err != nil || !created {
		// A refused or repeated upload may leave its freshly written blob
		// unreferenced.
		for _, d := range digests {
			a.DeleteIfOrphan(ctx, d)
		}
	}
	for _, d := range orphans {
		a.DeleteIfOrphan(ctx, d)
	}
	if err != nil {
		return nil, false, err
	}
	// The index entry is re-read from the store, not taken from this
	// upload: a delete or another overwrite of the same version may have
	// committed after this one and reached the cache first.
	a.Index.Refresh(context.WithoutCancel(ctx), repo.Name, stored.Name, stored.Version)
	return stored, created, nil
}

// DeleteChart deletes one version of a chart in r, whose write access the
// caller has checked, and returns it.
func (a *App) DeleteChart(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
		return nil, ChartNotFound(r.Name, name, version)
	}
	cv, orphans, err := a.Store.DeleteChartVersion(ctx, r.Name, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, ChartNotFound(r.Name, name, version)
	} else if err != nil {
		return nil, err
	}
	a.Index.Refresh(context.WithoutCancel(ctx), r.Name, name, version)
	for _, d := range orphans {
		a.DeleteIfOrphan(ctx, d)
	}
	return cv, nil
}

// DeleteRepository deletes r, whose owner access the caller has checked,
// with all its chart versions.
func (a *App) DeleteRepository(ctx context.Context, r *chartctl.Repository) error {
	orphans, err := a.Store.DeleteRepository(ctx, r.Name)
	if err != nil {
		return err
	}
	a.Index.Drop(r.Name)
	for _, d := range orphans {
		a.DeleteIfOrphan(ctx, d)
	}
	return nil
}
