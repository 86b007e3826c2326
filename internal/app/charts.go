package app

import (
	"context"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

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
// The record may be up to a second old (recordTTL) unless it changed
// through App.
func (a *App) ChartVersion(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	cv, err := a.SharedChartVersion(ctx, r.Name, name, version)
	if err != nil {
		return nil, err
	}
	cp := *cv
	return &cp, nil
}

// SharedChartVersion is ChartVersion for readers on a hot path (the
// registry's manifest and blob GETs), without the copy: the version
// returned is shared with every other reader and must not be modified.
func (a *App) SharedChartVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	cv, err := a.versions.peek(versionKey{repo, name, version}, func() (*chartctl.ChartVersion, error) {
		// Only stored versions are cached, so a cached one is valid.
		if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
			return nil, ChartNotFound(repo, name, version)
		}
		return a.Store.ChartVersion(ctx, repo, name, version)
	})
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, ChartNotFound(repo, name, version)
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
	// Manifest, when set, is the OCI manifest the chart was pushed with,
	// stored with the version in one transaction and tagged Tag
	// (chartctl.PutVersionOptions).
	Manifest *chartctl.OCIManifest
	// Tag is the tag of Manifest.
	Tag string
	// mirror marks a mirror's sync (PutMirrored), the only writer allowed
	// into a mirror repository.
	mirror bool
}

// PutChart commits u as a chart version of r, whose write access the
// caller has checked (WritableRepo). Blobs are made durable before the
// metadata transaction that refers to them, all under the digests' locks
// so no orphan sweep can remove them between. A re-upload of the same
// content (the same archive digest, or the same files in other archive
// bytes) returns the stored record and created=false; other content for a
// stored version is ECONFLICT unless forced on a server that allows
// overwriting, and so is a version SemVer-equal to another stored one.
// If r was deleted since the caller loaded it (even if its name was
// re-created), PutChart is ENOTFOUND and stores nothing.
// PutChart always consumes u.
func (a *App) PutChart(ctx context.Context, r *chartctl.Repository, u *Upload, opts PutOptions) (stored *chartctl.ChartVersion, created bool, err error) {
	if r.ReadOnly() != opts.mirror {
		err := ReadOnly(r)
		if !r.ReadOnly() {
			err = chartctl.Errorf(chartctl.ECONFLICT, "Repository %q is not a mirror or proxy.", r.Name)
		}
		return nil, false, a.Reject(u, err)
	}
	// The admission policy, before anything is stored: every protocol
	// and mirror syncs come through here (decision 3).
	adm, err := a.CheckPolicy(ctx, r, u)
	if err != nil {
		return nil, false, a.Reject(u, err)
	}
	put := chartctl.PutVersionOptions{Overwrite: opts.Force && a.Config.AllowOverwrite, Manifest: opts.Manifest, Tag: opts.Tag}
	if adm.Hold > 0 {
		// A held version's manifest is stored untagged, so tags/list
		// leaves it out; its tag still resolves (to those who may push)
		// through the version, and is listed from its release on.
		put.Tag = ""
	}
	// The version keeps the findings its policy did not refuse (lint
	// warnings are kept on the version).
	stored, created, err = a.commit(ctx, r, u, put, opts.CreatedAt, adm.Hold, adm.Verdict)
	a.observeUpload(created, err)
	if chartctl.ErrorCode(err) == chartctl.ECONFLICT && opts.Force && !a.Config.AllowOverwrite {
		return nil, false, chartctl.Errorf(chartctl.ECONFLICT, "%s This server does not allow overwriting (start it with --allow-overwrite).", chartctl.ErrorMessage(err))
	}
	return stored, created, err
}

// CheckUpload runs repository r's admission policy on u for a dry run
// and discards u: nothing is stored. It returns the findings, or the
// EPOLICY error naming every violated rule.
func (a *App) CheckUpload(ctx context.Context, r *chartctl.Repository, u *Upload) ([]chartctl.Finding, error) {
	defer u.Abort()
	adm, err := a.CheckPolicy(ctx, r, u)
	if err != nil {
		return nil, err
	}
	return adm.Findings, nil
}

// Reject discards u, refused for err before PutChart, and returns err.
func (a *App) Reject(u *Upload, err error) error {
	u.Abort()
	a.observeUpload(false, err)
	return err
}

// commit stores u as a version of repo; a hold above zero stores it held
// for that long (held.go); verdict is what the version keeps of its
// admission policy's findings.
func (a *App) commit(ctx context.Context, repo *chartctl.Repository, u *Upload, put chartctl.PutVersionOptions, createdAt time.Time, hold time.Duration, verdict *chartctl.VersionPolicy) (*chartctl.ChartVersion, bool, error) {
	defer u.Abort()
	digests := []string{u.blob.Digest()}
	if u.prov != nil {
		digests = append(digests, u.prov.Digest())
	}
	// RepositoryID binds the upload to the repository it was authorized
	// against: if that one is deleted and its name re-created meanwhile,
	// the store refuses it (ENOTFOUND) instead of filing it there.
	cv := &chartctl.ChartVersion{
		Repository: repo.Name, RepositoryID: repo.ID, Name: u.Chart.Name, Version: u.Chart.Version,
		AppVersion: u.Chart.AppVersion, Description: u.Chart.Description, Keywords: u.Chart.Keywords,
		ContentDigest: u.Chart.ContentDigest, Size: u.blob.Size(), CreatedAt: a.Now().UTC(), Metadata: u.Chart.MetadataJSON,
		Policy: verdict,
	}
	if !createdAt.IsZero() {
		cv.CreatedAt = createdAt.UTC()
	}
	event := chartctl.EventChartPushed
	if hold > 0 {
		until := a.Now().UTC().Add(hold)
		cv.HeldUntil = &until
		event = chartctl.EventChartHeld
	}
	// A provenance file for the archive of a held version (signing after
	// the push) attaches to it; its chart.pushed is sent at release, not
	// now. (A race with the hold sweep at worst sends it for a version
	// that is then deleted, which chart.deleted does not follow.)
	// Only a provenance file can be the news: without one, an upload of
	// the stored archive of a version changes nothing, and the stores
	// send no event for it. So the stored version is read only with one,
	// while the digests are claimed (on a shared store two round trips
	// at the same time).
	var (
		old    *chartctl.ChartVersion // nil when none was read or found
		looked errgroup.Group
	)
	if u.prov != nil {
		looked.Go(func() error {
			if v, err := a.Store.ChartVersion(ctx, repo.Name, cv.Name, cv.Version); err == nil {
				old = v
			}
			return nil
		})
	}
	release := func() {}
	var err error
	if !linkedUpload(u, put.Manifest) {
		// The claim keeps every process from deleting the blobs as
		// orphans between their commit and the record's (app/blobs.go).
		release, err = a.ClaimDigests(ctx, digests...)
	}
	_ = looked.Wait() // a failed read only leaves the event as it is
	if err != nil {
		return nil, false, err
	}
	if old != nil && old.Held() && hold == 0 && old.Digest == u.blob.Digest() {
		event = ""
	}
	stored, created, orphans, err := func() (*chartctl.ChartVersion, bool, []string, error) {
		d, err := u.blob.Commit()
		if err != nil {
			return nil, false, nil, err
		}
		cv.Digest = d
		if u.prov != nil {
			cv.ProvSize = u.prov.Size()
			if cv.ProvDigest, err = u.prov.Commit(); err != nil {
				return nil, false, nil, err
			}
		}
		if !cv.Held() {
			cv.IndexEntry = helmindex.RenderEntry(cv)
			// Stored with it, so a JSON index loads without parsing
			// YAML (issue #32).
			cv.IndexEntryJSON = helmindex.RenderEntryJSON(cv)
		}
		var events []*chartctl.Event
		if event != "" {
			events = append(events, a.NewEvent(ctx, event, repo.Name, repo.Organization, repoPath(repo.Name)+"/charts/"+cv.Name+"/"+cv.Version, cv.Name+"/"+cv.Version, ChartData(cv)))
		}
		rctx := a.Record(ctx, "chart.push", ChartTarget(repo.Name, cv.Name, cv.Version), repo.Organization, events...)
		return a.Store.PutChartVersion(rctx, cv, put)
	}()
	if err != nil || !created {
		// A refused or repeated upload may leave its blob unreferenced:
		// deleted if it was old (the same bytes committed long ago), else
		// left to the collection after the grace period.
		release()
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
	a.versions.forget(versionKey{repo.Name, stored.Name, stored.Version})
	if created {
		// An archive received in this request stays in memory while it
		// is claimed: its page, its images and its first pulls read it
		// from there instead of the blob store.
		if u.archive != nil && stored.Digest == u.blob.Digest() {
			a.KeepBlob(stored.Digest, u.archive.Bytes())
		}
		// The version refers to its blobs now.
		a.ReleaseLater(release)
		a.Committed()
	}
	// A provenance file came with a new version, or signatures of its
	// manifest were pushed before it (a re-push): its verification is
	// computed now, from reads made while the index takes the version
	// (on a shared store round trips at the same time), and a failure
	// only leaves it to the next re-verification.
	wctx := context.WithoutCancel(ctx)
	var (
		read errgroup.Group
		in   verificationInput
	)
	if created {
		read.Go(func() (err error) {
			in, err = a.readVerification(wctx, repo, stored)
			return err
		})
	}
	// The index entry is re-read from the store, not taken from this
	// upload: a delete or another overwrite of the same version may have
	// committed after this one and reached the cache first.
	a.versionChanged(wctx, repo.Name, stored.Name, stored.Version)
	if created {
		err := read.Wait()
		if err == nil {
			_, err = a.applyVerification(wctx, repo, stored, in)
		}
		if err != nil {
			a.Logger.Warn("verify chart version", "repository", repo.Name, "chart", stored.Name, "version", stored.Version, "err", err)
		}
		// Its images are found in the background (decision 9): the
		// version is pending until then.
		a.ImagesLater(repo.Name, stored.Name, stored.Version)
		// The web page is rendered once, in the background after this
		// answer (Pages.Run); one not rendered by then is rendered when
		// first viewed.
		a.Pages.RenderLater(stored.Digest)
	}
	return stored, created, nil
}

// linkedUpload reports whether u needs no claim of its blobs: an OCI
// push of an archive the blob store holds already, without a provenance
// file to write, whose manifest m names the archive. The archive is then
// linked to m's name, which keeps it from every deletion of orphans, and
// the version's transaction checks and locks that link (a link gone
// refuses the version), so nothing can delete it before the version
// refers to it.
func linkedUpload(u *Upload, m *chartctl.OCIManifest) bool {
	_, stored := u.blob.(*storedBlob)
	return stored && u.prov == nil && m != nil && slices.Contains(m.Blobs, u.blob.Digest())
}

// DeleteChart deletes one version of a chart in r, whose write access the
// caller has checked, and returns it. A mirror's versions are not deleted
// (MirrorReadOnly).
func (a *App) DeleteChart(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if r.ReadOnly() {
		return nil, ReadOnly(r)
	}
	return a.deleteChart(ctx, r, name, version)
}

// deleteChart is DeleteChart without the read-only check (a proxy's
// purge deletes what it cached).
func (a *App) deleteChart(ctx context.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
		return nil, ChartNotFound(r.Name, name, version)
	}
	old, err := a.Store.ChartVersion(ctx, r.Name, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, ChartNotFound(r.Name, name, version)
	} else if err != nil {
		return nil, err
	}
	rctx := a.Record(ctx, "chart.delete", ChartTarget(r.Name, name, version), r.Organization,
		a.NewEvent(ctx, chartctl.EventChartDeleted, r.Name, r.Organization, repoPath(r.Name)+"/charts/"+name+"/"+version, name+"/"+version, ChartData(old)))
	cv, orphans, err := a.Store.DeleteChartVersion(rctx, r.Name, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, ChartNotFound(r.Name, name, version)
	} else if err != nil {
		return nil, err
	}
	a.Committed()
	a.versions.forget(versionKey{r.Name, name, version})
	a.versionChanged(context.WithoutCancel(ctx), r.Name, name, version)
	for _, d := range orphans {
		a.DeleteIfOrphan(ctx, d)
	}
	return cv, nil
}

// DeleteRepository deletes r, whose owner access the caller has checked,
// with all its chart versions.
func (a *App) DeleteRepository(ctx context.Context, r *chartctl.Repository) error {
	rctx := a.Record(ctx, "repository.delete", r.Name, r.Organization,
		a.NewEvent(ctx, chartctl.EventRepositoryDeleted, r.Name, r.Organization, repoPath(r.Name), r.Name, RepositoryData(r)))
	orphans, err := a.Store.DeleteRepository(rctx, r.Name)
	a.ForgetRepository(r.Name)
	if err != nil {
		return err
	}
	a.Committed()
	a.repositoryChanged(r.Name)
	for _, d := range orphans {
		a.DeleteIfOrphan(ctx, d)
	}
	return nil
}

// CreateRepository stores r, which the caller has validated and may
// create, filling its ID and creation time, with its audit entry and
// repository.created event.
func (a *App) CreateRepository(ctx context.Context, r *chartctl.Repository) error {
	if r.ID == "" {
		r.ID = NewID("repo_")
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = a.Now().UTC()
	}
	if r.Visibility == "" {
		r.Visibility = chartctl.VisibilityPrivate
	}
	if r.IndexFormat == "" {
		r.IndexFormat = a.Config.DefaultIndexFormat
	}
	if r.IndexFormat == "" {
		r.IndexFormat = chartctl.IndexJSON
	}
	if !r.IndexFormat.Valid() {
		return chartctl.InvalidIndexFormat(r.IndexFormat)
	}
	rctx := a.Record(ctx, "repository.create", r.Name, r.Organization,
		a.NewEvent(ctx, chartctl.EventRepositoryCreated, r.Name, r.Organization, repoPath(r.Name), r.Name, RepositoryData(r)))
	if err := a.Store.CreateRepository(rctx, r); err != nil {
		return err
	}
	a.repoList.forget()
	a.Committed()
	if r.Mirror != nil {
		a.wakeMirror(r.Name)
	}
	if n := a.Config.DefaultRepositoryQuota; n > 0 {
		if err := a.Store.SetQuota(ctx, chartctl.QuotaRepository, r.Name, chartctl.Quota{MaxBytes: &n, RepositoryID: r.ID}); err != nil {
			return err
		}
	}
	return nil
}
