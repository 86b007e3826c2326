package app

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/robfig/cron/v3"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/text"
)

// RetentionDeletion is a version a retention run deletes, and why.
type RetentionDeletion struct {
	Name, Version, Reason string
}

// ParseRetentionDuration reads "30d", "12h" or "90m" (text.ParseDuration).
func ParseRetentionDuration(param, v string) (time.Duration, error) {
	d, err := text.ParseDuration(v)
	if err != nil {
		return 0, chartctl.Invalid(param, "%s must be a duration such as 30d or 12h.", param)
	}
	return d, nil
}

// FormatRetentionDuration writes a duration as ParseRetentionDuration
// reads it: whole days as "30d".
func FormatRetentionDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}

// ValidateRetention checks a policy: a SemVer constraint, a cron
// expression, a keep_latest of 1 or more. keep_latest 0 keeps nothing, so
// on its own it would delete every version at the next run: a slip of a
// flag, not a policy (what it does beside other rules, leaving it out
// does), so it is refused.
func ValidateRetention(p *chartctl.RetentionPolicy) error {
	if p.KeepLatest != nil && *p.KeepLatest < 1 {
		return chartctl.Invalid("keep_latest", "keep_latest must be 1 or more: 0 would keep no version, and on its own delete them all. Leave it out (null) to keep no fixed number.")
	}
	if p.KeepMatching != "" {
		if _, err := semver.NewConstraint(p.KeepMatching); err != nil {
			return chartctl.Invalid("keep_matching", "keep_matching %q is not a SemVer constraint (e.g. \">=1.0.0 <2.0.0\" or \"~1.2\").", p.KeepMatching)
		}
	}
	if p.Schedule != "" {
		if _, err := cron.ParseStandard(p.Schedule); err != nil {
			return chartctl.Invalid("schedule", "schedule %q is not a cron expression (e.g. \"0 3 * * *\" for 03:00 daily): %v", p.Schedule, err)
		}
	}
	return nil
}

// Retention returns repository name's policy (nil if none), which p must
// be allowed to read.
func (a *App) Retention(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.RetentionPolicy, error) {
	r, err := a.ReadableRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	all, err := a.Store.RetentionPolicies(ctx)
	if err != nil {
		return nil, err
	}
	return all[r.Name], nil
}

// SetRetention replaces the policy of repository name: a setting, so the
// maintain role (SettingsRole, CONTRACT §18), in a repository whose
// charts may change (not a mirror).
func (a *App) SetRetention(ctx context.Context, p *chartctl.Principal, name string, pol *chartctl.RetentionPolicy) error {
	r, err := a.ChartDeleteRepo(ctx, p, name)
	if err != nil {
		return err
	}
	if !p.RepoRole(r).AtLeast(SettingsRole) {
		return ForbiddenRole(SettingsRole, r)
	}
	if err := ValidateRetention(pol); err != nil {
		return err
	}
	if pol != nil {
		// Bound to the repository p was authorized against (§18
		// decision 2): a policy for a repository deleted and re-created
		// meanwhile would delete the new owner's versions.
		bound := *pol
		bound.RepositoryID = r.ID
		pol = &bound
	}
	return a.Store.SetRetentionPolicy(a.Record(ctx, "retention.set", r.Name, r.Organization), r.Name, pol)
}

// RunRetention applies repository name's policy for p (maintainers): with
// dryRun it only lists what would go. A dry run and the real run that
// follows it list the same versions.
func (a *App) RunRetention(ctx context.Context, p *chartctl.Principal, name string, dryRun bool) ([]RetentionDeletion, error) {
	r, err := a.ChartDeleteRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	all, err := a.Store.RetentionPolicies(ctx)
	if err != nil {
		return nil, err
	}
	pol := all[r.Name]
	if pol == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q has no retention policy; set one first (chartctl repo retention set).", r.Name)
	}
	out, err := a.applyRetention(ctx, r, pol, dryRun)
	if err == nil {
		a.AuditAct(ctx, "retention.run", r.Name, r.Organization, chartctl.OutcomeSuccess)
	}
	return out, err
}

func (a *App) applyRetention(ctx context.Context, r *chartctl.Repository, pol *chartctl.RetentionPolicy, dryRun bool) ([]RetentionDeletion, error) {
	// Counts not yet flushed would hide recent downloads from the
	// keep_downloaded_within rule.
	if err := a.FlushDownloads(ctx); err != nil {
		return nil, err
	}
	cvs, err := a.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
	if err != nil {
		return nil, err
	}
	plan := PlanRetention(pol, cvs, a.Now())
	if dryRun {
		return plan, nil
	}
	var done []RetentionDeletion
	for _, d := range plan {
		if _, err := a.DeleteChart(ctx, r, d.Name, d.Version); err != nil {
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				continue // deleted meanwhile
			}
			return done, err
		}
		done = append(done, d)
	}
	return done, nil
}

// PlanRetention lists the versions of cvs (ordered by name, then SemVer
// descending, as the store lists them) that pol deletes at now (§15): when
// any keep rule is set, every version none of them keeps; and
// pre-releases older than delete_prereleases_after. A version matching
// keep_matching is never deleted.
func PlanRetention(pol *chartctl.RetentionPolicy, cvs []*chartctl.ChartVersion, now time.Time) []RetentionDeletion {
	var pinned *semver.Constraints
	if pol.KeepMatching != "" {
		pinned, _ = semver.NewConstraint(pol.KeepMatching)
	}
	keepRules := pol.KeepLatest != nil || pol.KeepPushedWithin != nil || pol.KeepDownloadedWithin != nil
	var out []RetentionDeletion
	rank := map[string]int{}
	for _, cv := range cvs {
		v, verr := semver.NewVersion(cv.Version)
		isPinned := pinned != nil && verr == nil && pinned.Check(v)
		if !isPinned && pol.DeletePrereleasesAfter != nil && verr == nil && v.Prerelease() != "" && now.Sub(cv.CreatedAt) > *pol.DeletePrereleasesAfter {
			out = append(out, RetentionDeletion{cv.Name, cv.Version, fmt.Sprintf("pre-release pushed more than %s ago", FormatRetentionDuration(*pol.DeletePrereleasesAfter))})
			continue
		}
		// The newest N are counted among the versions the pre-release
		// rule leaves.
		i := rank[cv.Name]
		rank[cv.Name] = i + 1
		if isPinned {
			continue
		}
		if !keepRules {
			continue
		}
		if pol.KeepLatest != nil && i < *pol.KeepLatest {
			continue
		}
		if pol.KeepPushedWithin != nil && now.Sub(cv.CreatedAt) <= *pol.KeepPushedWithin {
			continue
		}
		if pol.KeepDownloadedWithin != nil && cv.LastDownloadedAt != nil && now.Sub(*cv.LastDownloadedAt) <= *pol.KeepDownloadedWithin {
			continue
		}
		var why []string
		if pol.KeepLatest != nil {
			why = append(why, fmt.Sprintf("not among the newest %d", *pol.KeepLatest))
		}
		if pol.KeepPushedWithin != nil {
			why = append(why, "not pushed within "+FormatRetentionDuration(*pol.KeepPushedWithin))
		}
		if pol.KeepDownloadedWithin != nil {
			why = append(why, "not downloaded within "+FormatRetentionDuration(*pol.KeepDownloadedWithin))
		}
		out = append(out, RetentionDeletion{cv.Name, cv.Version, strings.Join(why, ", ")})
	}
	return out
}

// AuditAct records an act that is not itself a store change (a retention
// run, whose deletions are audited one by one; a refusal).
func (a *App) AuditAct(ctx context.Context, action, target, org string, outcome chartctl.Outcome) {
	a.AuditFailure(ctx, action, target, org, outcome)
}

// RetentionLeaseTTL is how long a replica holds a repository's
// retention lease (chartctl.LeaseStore) without renewing it; a running
// scheduled run renews it every third of that, so a replica that dies
// mid-run blocks the others for at most this long.
const RetentionLeaseTTL = 2 * time.Minute

// RunRetentionScheduler checks, once a minute until stop closes, which
// retention schedules are due, and runs them.
//
// A schedule is due when one of its times has passed since the policy's
// last scheduled run (chartctl.RetentionPolicy.LastRun; for a policy
// never run yet, since the previous check), so runs missed while every
// replica was down happen once at the next check. Replicas of a shared
// store each check, and each due run happens on one of them: the replica
// takes the repository's lease ("retention/<repository>"), reads the
// policy again under it, runs it only if still due, and records the run
// (Store.MarkRetentionRun) before letting the lease go. A replica that
// loses the lease mid-run (a stall longer than RetentionLeaseTTL) stops
// deleting and leaves the run to the new holder.
func (a *App) RunRetentionScheduler(stop <-chan struct{}) {
	last := a.Now()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		from, now := last, a.Now()
		last = now
		a.runDue(context.Background(), from, now)
	}
}

// retentionDue reports whether a schedule has a time in (ref, now], ref
// being the last scheduled run or, if none, from (the previous check).
func retentionDue(sched cron.Schedule, lastRun, from, now time.Time) bool {
	ref := lastRun
	if ref.IsZero() {
		ref = from
	}
	return !sched.Next(ref).After(now)
}

// runDue runs the scheduled policies that are due at now, from being the
// previous check.
func (a *App) runDue(ctx context.Context, from, now time.Time) {
	all, err := a.Store.RetentionPolicies(ctx)
	if err != nil {
		a.Logger.Error("load retention policies", "err", err)
		return
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pol := all[n]
		if pol.Schedule == "" {
			continue
		}
		sched, err := cron.ParseStandard(pol.Schedule)
		if err != nil || !retentionDue(sched, pol.LastRun, from, now) {
			continue
		}
		a.runScheduled(ctx, n, from, now)
	}
}

// runScheduled runs repository repo's policy under its lease if it is
// still due at now once the lease is held.
func (a *App) runScheduled(ctx context.Context, repo string, from, now time.Time) {
	lease := "retention/" + repo
	ok, err := a.Store.AcquireLease(ctx, lease, a.Replica, RetentionLeaseTTL)
	if err != nil {
		a.Logger.Error("take retention lease", "repository", repo, "err", err)
		return
	}
	if !ok {
		return // another replica runs it
	}
	defer func() {
		if err := a.Store.ReleaseLease(context.WithoutCancel(ctx), lease, a.Replica); err != nil {
			a.Logger.Error("release retention lease", "repository", repo, "err", err)
		}
	}()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Stopped before the lease is released (defers run last first), so no
	// renewal can take it again afterwards.
	lost, stopKeeping := a.keepLease(runCtx, cancel, lease)
	defer stopKeeping()

	// Read the policy again under the lease: another replica may have run
	// it between this replica's first read and the lease.
	all, err := a.Store.RetentionPolicies(runCtx)
	if err != nil {
		a.Logger.Error("load retention policy", "repository", repo, "err", err)
		return
	}
	pol := all[repo]
	if pol == nil || pol.Schedule == "" {
		return
	}
	sched, err := cron.ParseStandard(pol.Schedule)
	if err != nil || !retentionDue(sched, pol.LastRun, from, now) {
		return
	}
	r, err := a.Store.Repository(runCtx, repo)
	if err != nil {
		return
	}
	done, runErr := a.applyRetention(runCtx, r, pol, false)
	if lost() {
		a.Logger.Warn("scheduled retention run stopped: its lease passed to another replica", "repository", repo, "deleted", len(done))
		return
	}
	// A failed run is recorded as a run too: it is tried again at the
	// schedule's next time, not every minute.
	if err := a.Store.MarkRetentionRun(runCtx, repo, now); err != nil {
		a.Logger.Error("record retention run", "repository", repo, "err", err)
	}
	if runErr != nil {
		a.Logger.Error("scheduled retention run", "repository", repo, "deleted", len(done), "err", runErr)
		a.AuditAct(ctx, "retention.run", r.Name, r.Organization, chartctl.OutcomeFailed)
		return
	}
	a.AuditAct(ctx, "retention.run", r.Name, r.Organization, chartctl.OutcomeSuccess)
	a.Logger.Info("scheduled retention run", "repository", repo, "deleted", len(done))
}

// keepLease renews lease every third of RetentionLeaseTTL until ctx ends
// or stop is called; stop returns once renewing has stopped. If a renewal
// finds the lease taken (or cannot reach the store for a whole TTL) it
// calls cancel; lost then reports true.
func (a *App) keepLease(ctx context.Context, cancel context.CancelFunc, lease string) (lost func() bool, stop func()) {
	var gone atomic.Bool
	ctx, quit := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(RetentionLeaseTTL / 3)
		defer t.Stop()
		lastOK := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			ok, err := a.Store.AcquireLease(ctx, lease, a.Replica, RetentionLeaseTTL)
			if ctx.Err() != nil {
				return
			}
			if err == nil && ok {
				lastOK = time.Now()
				continue
			}
			if err != nil && time.Since(lastOK) < RetentionLeaseTTL {
				a.Logger.Warn("renew retention lease", "lease", lease, "err", err)
				continue
			}
			gone.Store(true)
			cancel()
			return
		}
	}()
	return gone.Load, func() { quit(); <-done }
}
