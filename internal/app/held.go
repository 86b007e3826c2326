package app

import (
	"context"
	"time"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds held versions (issue #30, CONTRACT §18 decision 3): a
// chart pushed without a verified signature into a repository whose
// policy requires one and sets a hold_window is stored but held. It is in
// no index, list, search or tag list, its archive and blobs are served to
// nobody, and its record and manifest only to those who may push there
// (so a signer can sign it). It is released when a signature verifies
// (VerifyVersion, whatever brought the signature), and deleted by the hold
// sweep when its window closes.

// HoldSweepInterval is how often RunHoldSweeper looks for held versions
// whose window has closed.
const HoldSweepInterval = 30 * time.Second

// holdLease is the lease under which one replica sweeps held versions.
const holdLease = "hold-sweep"

// holdLeaseTTL bounds how long a replica that died mid-sweep keeps the
// others from sweeping.
const holdLeaseTTL = time.Minute

// VisibleVersion returns nil when p may see chart version cv's record: any
// reader for a version that is not held, only those who may push to its
// repository for a held one. Others get the ENOTFOUND of a missing
// version (never reveal existence, CONTRACT §2).
func (a *App) VisibleVersion(ctx context.Context, p *chartctl.Principal, cv *chartctl.ChartVersion) error {
	if !cv.Held() || a.mayPush(ctx, p, cv.Repository) {
		return nil
	}
	return ChartNotFound(cv.Repository, cv.Name, cv.Version)
}

// ServableVersion returns nil when chart version cv's archive and
// provenance file may be served: never while it is held. Those who may
// push are told why and until when; others get the plain ENOTFOUND.
func (a *App) ServableVersion(ctx context.Context, p *chartctl.Principal, cv *chartctl.ChartVersion) error {
	if !cv.Held() {
		return nil
	}
	if a.mayPush(ctx, p, cv.Repository) {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q version %q is held until %s, waiting for a verified signature; it is served once signed (push a .prov file or a cosign or Notation signature), or deleted then.",
			cv.Name, cv.Version, cv.HeldUntil.UTC().Format(time.RFC3339))
	}
	return ChartNotFound(cv.Repository, cv.Name, cv.Version)
}

// mayPush reports whether p may push chart versions to repository repo.
func (a *App) mayPush(ctx context.Context, p *chartctl.Principal, repo string) bool {
	if p == nil {
		return false
	}
	_, err := a.ChartPushRepo(ctx, p, repo)
	return err == nil
}

// policyVerification is v as the admission policy reads it: its verified
// signatures only (an unverified one vouches for nothing); no record is
// unsigned.
func policyVerification(v *chartctl.Verification) chartctl.PolicyVerification {
	if v == nil {
		return chartctl.PolicyVerification{Status: chartctl.VerificationUnsigned}
	}
	out := chartctl.PolicyVerification{Status: v.Status}
	for _, s := range v.Signatures {
		if s.Verified() {
			out.Signatures = append(out.Signatures, chartctl.PolicySignature{Kind: s.Kind, Identity: s.Identity, Trust: s.Trust})
		}
	}
	return out
}

// releaseIfSigned releases held version cv of r when v (its fresh
// verification record) satisfies the repository's effective
// require_signature, or the policy no longer requires a signature. The
// release is audited ("chart.release") and emits chart.released, then
// the chart.pushed its push held back. A version released meanwhile by
// another caller is left alone.
func (a *App) releaseIfSigned(ctx context.Context, r *chartctl.Repository, cv *chartctl.ChartVersion, v *chartctl.Verification) error {
	if !cv.Held() {
		return nil
	}
	own, floor, err := a.policies(ctx, r)
	if err != nil {
		return err
	}
	pol := admission.Effective(floor, own)
	if !chartctl.SatisfiesSignature(pol.RequireSignature, policyVerification(v)) {
		return nil
	}
	next := *cv
	next.HeldUntil, next.Verification = nil, v
	entry, entryJSON := renderEntries(&next)
	path := repoPath(r.Name) + "/charts/" + cv.Name + "/" + cv.Version
	data := ChartData(&next)
	rctx := a.Record(ctx, "chart.release", ChartTarget(r.Name, cv.Name, cv.Version), r.Organization,
		a.NewEvent(ctx, chartctl.EventChartReleased, r.Name, r.Organization, path, cv.Name+"/"+cv.Version, data),
		a.NewEvent(ctx, chartctl.EventChartPushed, r.Name, r.Organization, path, cv.Name+"/"+cv.Version, data))
	err = a.Store.ReleaseChartVersion(rctx, r.Name, cv.Name, cv.Version, cv.Digest, entry, entryJSON)
	if c := chartctl.ErrorCode(err); c == chartctl.ECONFLICT || c == chartctl.ENOTFOUND {
		return nil // released, replaced or deleted meanwhile
	} else if err != nil {
		return err
	}
	a.Committed()
	a.versions.forget(versionKey{r.Name, cv.Name, cv.Version})
	a.versionChanged(context.WithoutCancel(ctx), r.Name, cv.Name, cv.Version)
	a.Logger.Info("held chart version released", "repository", r.Name, "chart", cv.Name, "version", cv.Version)
	return nil
}

// RunHoldSweeper deletes, every HoldSweepInterval until stop closes, the
// held versions whose window has closed (SweepHeld).
func (a *App) RunHoldSweeper(stop <-chan struct{}) {
	t := time.NewTicker(HoldSweepInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if _, err := a.SweepHeld(context.Background()); err != nil {
			a.Logger.Error("sweep held chart versions", "err", err)
		}
	}
}

// SweepHeld deletes every held version whose window closed by a.Now(),
// under a lease so that of replicas sharing a store one sweeps, and
// returns them. Each deletion is audited ("chart.hold_expire", by the
// system) and touches nothing but that version (and blobs only it used).
// No chart.deleted event is sent: its chart.pushed never was. A version
// released between the listing and its deletion is kept (the store
// deletes only a version still held past its window).
func (a *App) SweepHeld(ctx context.Context) ([]*chartctl.ChartVersion, error) {
	now := a.Now().UTC()
	due, err := a.Store.HeldChartVersions(ctx, now)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	ok, err := a.Store.AcquireLease(ctx, holdLease, a.Replica, holdLeaseTTL)
	if err != nil || !ok {
		return nil, err // another replica sweeps
	}
	defer func() {
		if err := a.Store.ReleaseLease(context.WithoutCancel(ctx), holdLease, a.Replica); err != nil {
			a.Logger.Error("release hold sweep lease", "err", err)
		}
	}()
	var deleted []*chartctl.ChartVersion
	for _, cv := range due {
		r, err := a.Store.Repository(ctx, cv.Repository)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return deleted, err
		}
		rctx := a.Record(ctx, "chart.hold_expire", ChartTarget(r.Name, cv.Name, cv.Version), r.Organization)
		gone, orphans, err := a.Store.ExpireHeldChartVersion(rctx, r.Name, cv.Name, cv.Version, now)
		if c := chartctl.ErrorCode(err); c == chartctl.ECONFLICT || c == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return deleted, err
		}
		a.versions.forget(versionKey{r.Name, cv.Name, cv.Version})
		a.versionChanged(context.WithoutCancel(ctx), r.Name, cv.Name, cv.Version)
		for _, d := range orphans {
			a.DeleteIfOrphan(ctx, d)
		}
		a.Logger.Info("held chart version deleted: its hold window closed unsigned", "repository", r.Name, "chart", cv.Name, "version", cv.Version)
		deleted = append(deleted, gone)
	}
	return deleted, nil
}

// releaseHeldIn releases the held versions of the repositories match
// accepts that their repository's policy no longer holds (it was
// loosened: no signature required, or one they have): a policy change
// decides on held versions at once instead of leaving them to the sweep.
// Only held versions are read (HeldChartVersions), not whole
// repositories.
func (a *App) releaseHeldIn(ctx context.Context, match func(repo string) bool) {
	held, err := a.Store.HeldChartVersions(ctx, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		a.Logger.Error("list held chart versions", "err", err)
		return
	}
	for _, cv := range held {
		if !match(cv.Repository) {
			continue
		}
		r, err := a.Store.Repository(ctx, cv.Repository)
		if err != nil {
			continue
		}
		v := cv.Verification
		if v == nil {
			v = &chartctl.Verification{Status: chartctl.VerificationUnsigned}
		}
		if err := a.releaseIfSigned(ctx, r, cv, v); err != nil {
			a.Logger.Error("release held chart version", "repository", r.Name, "chart", cv.Name, "version", cv.Version, "err", err)
		}
	}
}
