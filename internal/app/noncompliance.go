package app

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the noncompliance sweep (issue #30, CONTRACT §18): "A
// policy change does not delete stored versions; it marks those that no
// longer comply". When a repository's policy or its organization's floor
// changes, every stored version of the repositories concerned is checked
// again, in the background, with the same admission checks an upload
// meets, and the rules each breaks now are recorded on it
// (chartctl.VersionPolicy). Nothing is ever deleted or hidden here:
// noncompliant versions stay listed and pullable.

// recheckLease names the lease one replica at a time re-checks under.
const recheckLease = "policy-recheck"

// recheckScope names the repositories a policy change concerns: one
// repository, every repository of an organization, or ("" scope) all.
type recheckScope struct {
	scope, name string
}

func (s recheckScope) matches(r *chartctl.Repository) bool {
	switch s.scope {
	case chartctl.PolicyRepository:
		return r.Name == s.name
	case chartctl.PolicyOrganization:
		return r.Organization == s.name
	}
	return true
}

// recheck is the state of the background sweep.
type recheck struct {
	mu      sync.Mutex
	running bool
	// pending are the scopes asked for while a run was going on: at most
	// one entry per repository or organization, so a burst of policy
	// changes queues a bounded amount of work.
	pending []recheckScope
	done    int
	total   int
	marked  int
}

// RecheckLater re-checks, in the background and under a lease, the stored
// versions a policy change of scope (chartctl.PolicyRepository or
// chartctl.PolicyOrganization) and name concerns. Calls while a run is
// going on queue their scope for the next run.
func (a *App) RecheckLater(scope, name string) {
	s := recheckScope{scope, name}
	a.recheck.mu.Lock()
	if a.recheck.running {
		if !slices.Contains(a.recheck.pending, s) {
			a.recheck.pending = append(a.recheck.pending, s)
		}
		a.recheck.mu.Unlock()
		return
	}
	a.recheck.running = true
	a.recheck.mu.Unlock()
	go func() {
		scopes := []recheckScope{s}
		for {
			if err := a.recheckUnderLease(context.Background(), scopes); err != nil {
				a.Logger.Error("re-check chart versions against their policy", "err", err)
			}
			a.recheck.mu.Lock()
			if len(a.recheck.pending) == 0 {
				a.recheck.running = false
				a.recheck.mu.Unlock()
				return
			}
			scopes, a.recheck.pending = a.recheck.pending, nil
			a.recheck.mu.Unlock()
		}
	}()
}

// RecheckProgress reports the background sweep: whether one is running,
// how many versions it has checked of how many, and how many of them it
// found noncompliant.
func (a *App) RecheckProgress() (running bool, done, total, noncompliant int) {
	a.recheck.mu.Lock()
	defer a.recheck.mu.Unlock()
	return a.recheck.running, a.recheck.done, a.recheck.total, a.recheck.marked
}

// recheckUnderLease takes the sweep's lease, waiting while another
// replica holds it (that replica's run may have started before this
// change and miss it), then re-checks scopes.
func (a *App) recheckUnderLease(ctx context.Context, scopes []recheckScope) error {
	const ttl = time.Minute
	for {
		ok, err := a.Store.AcquireLease(ctx, recheckLease, a.Replica, ttl)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(ttl / 6):
		}
	}
	defer func() { _ = a.Store.ReleaseLease(context.WithoutCancel(ctx), recheckLease, a.Replica) }()
	renew := func() error {
		if ok, err := a.Store.AcquireLease(ctx, recheckLease, a.Replica, ttl); err != nil {
			return err
		} else if !ok {
			return chartctl.Errorf(chartctl.EINTERNAL, "The policy re-check lost its lease.")
		}
		return nil
	}
	return a.RecheckAll(ctx, func(r *chartctl.Repository) bool {
		for _, s := range scopes {
			if s.matches(r) {
				return true
			}
		}
		return false
	}, renew)
}

// RecheckAll checks every stored version of the repositories match
// accepts (nil: all) against its repository's effective policy now and
// records the verdict, one version at a time (each lint is one bounded
// child process). renew, when set, is called every twenty seconds or so
// to keep the caller's lease; its error stops the run.
func (a *App) RecheckAll(ctx context.Context, match func(*chartctl.Repository) bool, renew func() error) error {
	repos, err := a.Store.Repositories(ctx)
	if err != nil {
		return err
	}
	var todo []*chartctl.Repository
	for _, r := range repos {
		if match == nil || match(r) {
			todo = append(todo, r)
		}
	}
	a.recheck.mu.Lock()
	a.recheck.done, a.recheck.total, a.recheck.marked = 0, 0, 0
	a.recheck.mu.Unlock()
	renewed := a.Now()
	checked := 0
	for _, r := range todo {
		own, floor, err := a.policies(ctx, r)
		if err != nil {
			return err
		}
		pol := admission.Effective(floor, own)
		policyAt := own.UpdatedAt
		if floor.UpdatedAt.After(policyAt) {
			policyAt = floor.UpdatedAt
		}
		cvs, err := a.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		a.recheck.mu.Lock()
		a.recheck.total += len(cvs)
		a.recheck.mu.Unlock()
		a.Logger.Info("re-checking chart versions against the admission policy", "repository", r.Name, "versions", len(cvs))
		for _, cv := range cvs {
			if renew != nil && a.Now().Sub(renewed) > 20*time.Second {
				if err := renew(); err != nil {
					return err
				}
				renewed = a.Now()
			}
			marked, err := a.recheckVersion(ctx, r, pol, policyAt, cv, cvs)
			if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				// One unreadable version does not stop the sweep; it keeps
				// its previous verdict and the log says why.
				a.Logger.Warn("re-check chart version", "repository", r.Name, "chart", cv.Name, "version", cv.Version, "err", err)
			}
			checked++
			a.recheck.mu.Lock()
			a.recheck.done++
			if marked {
				a.recheck.marked++
			}
			a.recheck.mu.Unlock()
			if checked%500 == 0 {
				a.Logger.Info("re-checking chart versions against the admission policy", "done", checked)
			}
		}
	}
	_, done, total, marked := a.RecheckProgress()
	a.Logger.Info("re-checked chart versions against the admission policy", "versions", done, "of", total, "noncompliant", marked)
	return nil
}

// recheckVersion evaluates cv, a version of r, against pol (the
// effective policy, last set at policyAt) and stores the verdict when it
// changed. all are the stored versions of r, for monotonic_versions: a
// stored version breaks it when a greater version of its chart was stored
// before it (a back-fill). It reports whether cv is noncompliant.
func (a *App) recheckVersion(ctx context.Context, r *chartctl.Repository, pol chartctl.Policy, policyAt time.Time, cv *chartctl.ChartVersion, all []*chartctl.ChartVersion) (bool, error) {
	var verdict *chartctl.VersionPolicy
	if !pol.IsDefault() {
		findings, err := a.evaluateStored(ctx, pol, cv, all)
		if err != nil {
			return cv.Policy.Noncompliant(), err
		}
		verdict = &chartctl.VersionPolicy{Findings: findings, CheckedAt: a.Now().UTC(), PolicyAt: policyAt.UTC()}
	}
	if sameVersionPolicy(cv.Policy, verdict) {
		return verdict.Noncompliant(), nil
	}
	if err := a.Store.SetVersionPolicy(ctx, r.Name, cv.Name, cv.Version, cv.Digest, verdict); err != nil {
		return cv.Policy.Noncompliant(), err
	}
	a.versions.forget(versionKey{r.Name, cv.Name, cv.Version})
	if verdict.Noncompliant() != cv.Policy.Noncompliant() {
		a.Logger.Info("chart version compliance changed", "repository", r.Name, "chart", cv.Name, "version", cv.Version,
			"noncompliant", verdict.Noncompliant())
	}
	return verdict.Noncompliant(), nil
}

// evaluateStored runs the admission checks on a stored version: its
// archive from the blob store, its verification record as the signature
// verdict. A signature the policy requires and the version lacks is a
// violation here: the hold window applies to uploads only.
func (a *App) evaluateStored(ctx context.Context, pol chartctl.Policy, cv *chartctl.ChartVersion, all []*chartctl.ChartVersion) ([]chartctl.Finding, error) {
	archive, err := a.readBlob(ctx, cv.Digest, a.Config.MaxChartSize)
	if err != nil {
		return nil, err
	}
	ch, err := chart.Read(bytes.NewReader(archive), a.Config.ChartLimits)
	if err != nil {
		return nil, err
	}
	in := admission.Input{Archive: archive, Chart: ch, Limits: a.Config.ChartLimits, Lint: a.Lint,
		Verification: policyVerification(cv.Verification)}
	for _, o := range all {
		if o.Name == cv.Name && o.Version != cv.Version && o.CreatedAt.Before(cv.CreatedAt) {
			in.Stored = append(in.Stored, o.Version)
		}
	}
	res, err := admission.Evaluate(ctx, pol, in)
	if err != nil {
		return nil, err
	}
	findings := res.Findings
	if res.Unsigned != nil {
		findings = append(findings, chartctl.Finding{Rule: res.Unsigned.Rule, Severity: chartctl.SeverityError, Message: res.Unsigned.Message})
	}
	return findings, nil
}

// sameVersionPolicy reports whether a stored verdict says what v says
// under the same policy, apart from when it was computed (a re-check that
// changes nothing writes nothing).
func sameVersionPolicy(old, v *chartctl.VersionPolicy) bool {
	if old == nil || v == nil {
		return old == v
	}
	return old.PolicyAt.Equal(v.PolicyAt) && slices.Equal(old.Findings, v.Findings)
}
