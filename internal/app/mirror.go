package app

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the rules of mirror repositories (CONTRACT §14): what
// a mirror's settings may be, that nothing but its syncs writes charts
// into it, and how a sync is asked for. The syncs themselves run in
// internal/mirror.

// DefaultMirrorInterval is a mirror's interval when none is given.
const DefaultMirrorInterval = time.Hour

// maxMirrorInterval bounds the interval (a year).
const maxMirrorInterval = 365 * 24 * time.Hour

// FlagAllowPrivateUpstreams is the server flag that lets mirrors reach
// loopback, private and link-local upstreams.
const FlagAllowPrivateUpstreams = "--allow-private-upstreams"

// MirrorInput is what a caller sets on a mirror: all of it when creating
// one (URL required, Interval defaulting to DefaultMirrorInterval), the
// non-nil fields when changing one. An empty Username or Password removes
// it.
type MirrorInput struct {
	URL      *string
	Interval *string
	Username *string
	Password *string
}

// NewMirror validates in and returns the mirror a new repository is
// created with: its password sealed, its status syncing (the first sync
// starts as soon as the repository exists). Errors are EINVALID naming
// "mirror.url", "mirror.interval", "mirror.username" or
// "mirror.password".
func (a *App) NewMirror(in MirrorInput) (*chartctl.Mirror, error) {
	if in.URL == nil {
		return nil, chartctl.Invalid("mirror.url", "mirror.url is required: the URL of the upstream Helm repository (where its index.yaml is).")
	}
	s, err := a.mirrorSettings(chartctl.MirrorSettings{Interval: DefaultMirrorInterval}, in)
	if err != nil {
		return nil, err
	}
	return &chartctl.Mirror{MirrorSettings: s, MirrorState: chartctl.MirrorState{Status: chartctl.MirrorSyncing}}, nil
}

// mirrorSettings applies in to cur and validates the result.
func (a *App) mirrorSettings(cur chartctl.MirrorSettings, in MirrorInput) (chartctl.MirrorSettings, error) {
	out := cur
	if in.URL != nil {
		u, err := a.validateUpstreamURL(*in.URL)
		if err != nil {
			return out, err
		}
		out.URL = u
	}
	if in.Interval != nil {
		d, err := ParseMirrorInterval(*in.Interval)
		if err != nil {
			return out, err
		}
		out.Interval = d
	}
	if in.Username != nil {
		u := *in.Username
		if len(u) > 256 || strings.ContainsAny(u, ":\r\n") {
			return out, chartctl.Invalid("mirror.username", "mirror.username must be at most 256 characters, without ':' or line breaks.")
		}
		out.Username = u
	}
	if in.Password != nil {
		p := *in.Password
		if len(p) > 1024 || strings.ContainsAny(p, "\r\n") {
			return out, chartctl.Invalid("mirror.password", "mirror.password must be at most 1024 characters, without line breaks.")
		}
		out.Password = nil
		if p != "" {
			if a.Secrets == nil {
				return out, chartctl.Errorf(chartctl.EUNAVAILABLE, "Mirror passwords cannot be stored: the server has no secrets key.")
			}
			sealed, err := a.Secrets.Seal([]byte(p))
			if err != nil {
				return out, err
			}
			out.Password = sealed
		}
	}
	return out, nil
}

// ParseMirrorInterval reads a mirror's interval: a Go duration ("90m",
// "12h") or whole days ("7d"), from MinMirrorInterval to a year, kept to
// the second. Returns EINVALID naming "mirror.interval".
func ParseMirrorInterval(v string) (time.Duration, error) {
	d, err := ParseRetentionDuration("mirror.interval", strings.TrimSpace(v))
	if err != nil {
		return 0, chartctl.Invalid("mirror.interval", "mirror.interval must be a duration such as 30m, 12h or 7d, not %q.", truncate(v, 40))
	}
	if d < chartctl.MinMirrorInterval || d > maxMirrorInterval {
		return 0, chartctl.Invalid("mirror.interval", "mirror.interval must be at least %s and at most 365d, not %s.", FormatDuration(chartctl.MinMirrorInterval), FormatDuration(d))
	}
	return d.Truncate(time.Second), nil
}

// FormatDuration writes d as ParseMirrorInterval reads it, shortest form
// first: whole days as "7d", else "1h30m", "90s".
func FormatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// validateUpstreamURL checks an upstream's URL: absolute http(s), without
// credentials (they go in username and password, which are stored
// sealed) or a fragment. A trailing "/index.yaml" names the same
// repository and is dropped. A literal private address is refused at once
// unless allowed; names are checked when each sync connects.
//
// An oci://HOST/PATH upstream (CONTRACT §18 "Federation") is a registry
// path: one chart repository (oci://HOST/PATH/CHART, all its tags) or a
// namespace whose chart repositories the registry's /v2/_catalog lists
// (decision 15). It is reached over https, or plain http for hosts the
// operator lists in --plain-http-upstreams.
func (a *App) validateUpstreamURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err == nil && u.Scheme == "oci" {
		return a.validateOCIUpstream(raw, u)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > 2048 {
		return "", chartctl.Invalid("mirror.url", "mirror.url must be an absolute http or https URL of at most 2048 characters (the upstream Helm repository, where its index.yaml is), or oci://HOST/PATH for an OCI registry.")
	}
	if u.User != nil {
		return "", chartctl.Invalid("mirror.url", "mirror.url must not carry credentials; give them as mirror.username and mirror.password, which are stored encrypted.")
	}
	if u.Fragment != "" {
		return "", chartctl.Invalid("mirror.url", "mirror.url must not have a #fragment.")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !a.Config.AllowPrivateUpstreams && !a.Config.PrivateUpstreams.Permits(ip) {
		return "", chartctl.Invalid("mirror.url", "mirror.url points to a private or loopback address (%s), which this server refuses (start it with %s to allow it).", ip, FlagAllowPrivateUpstreams)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/index.yaml"), "/")
	u.RawPath = ""
	return u.String(), nil
}

// validateOCIUpstream checks an oci://HOST/PATH mirror upstream and
// returns it without a trailing slash.
func (a *App) validateOCIUpstream(raw string, u *url.URL) (string, error) {
	path := strings.Trim(u.Path, "/")
	if u.Host == "" || path == "" || len(raw) > 2048 || u.RawQuery != "" || u.Fragment != "" || strings.Contains(path, "//") {
		return "", chartctl.Invalid("mirror.url", "mirror.url %q is not of the form oci://HOST/PATH (one chart repository, oci://HOST/PATH/CHART, or every chart repository the registry's catalog lists under PATH).", truncate(raw, 200))
	}
	if u.User != nil {
		return "", chartctl.Invalid("mirror.url", "mirror.url must not carry credentials; give them as mirror.username and mirror.password, which are stored encrypted.")
	}
	if strings.ToLower(path) != path {
		return "", chartctl.Invalid("mirror.url", "mirror.url %q has upper-case letters in its path, which OCI repository names cannot have.", truncate(raw, 200))
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !a.Config.AllowPrivateUpstreams && !a.Config.PrivateUpstreams.Permits(ip) {
		return "", chartctl.Invalid("mirror.url", "mirror.url points to a private or loopback address (%s), which this server refuses (start it with %s to allow it).", ip, FlagAllowPrivateUpstreams)
	}
	return "oci://" + u.Host + "/" + path, nil
}

// MirrorReadOnly is the EFORBIDDEN error of a chart write (an upload by
// any protocol, a delete, a retention policy or run) to the mirror
// repository r.
func MirrorReadOnly(r *chartctl.Repository) error {
	return chartctl.Errorf(chartctl.EFORBIDDEN, "%s", MirrorReadOnlyMessage(r))
}

// ReadOnly is the EFORBIDDEN error of a chart write to a read-only
// repository: a mirror (MirrorReadOnly) or a proxy.
func ReadOnly(r *chartctl.Repository) error {
	return chartctl.Errorf(chartctl.EFORBIDDEN, "%s", ReadOnlyMessage(r))
}

// ReadOnlyMessage is ReadOnly's message, for transports with their own
// error shape (the OCI registry).
func ReadOnlyMessage(r *chartctl.Repository) string {
	if r.Proxy != nil {
		return ProxyReadOnlyMessage(r)
	}
	return MirrorReadOnlyMessage(r)
}

// MirrorReadOnlyMessage says that r is a read-only mirror and of what, for
// transports with their own error shape (the OCI registry).
func MirrorReadOnlyMessage(r *chartctl.Repository) string {
	return "Repository " + strconv.Quote(r.Name) + " is a read-only mirror of " + r.Mirror.URL +
		": its charts change only when it syncs from there (chartctl repo sync " + r.Name + ")."
}

// ChartPushRepo loads a repository p may push chart versions to:
// visibility, the push permission of a robot, the repo:write scope, the
// write role (WritableRepo), and not a mirror (MirrorReadOnly). Every protocol's push asks
// this (or ChartWriteDecision), so all answer alike.
func (a *App) ChartPushRepo(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, error) {
	return a.chartWritableRepo(ctx, p, name, chartctl.RobotPush)
}

// ChartDeleteRepo loads a repository whose chart versions p may delete:
// as ChartPushRepo, with a robot's delete permission instead of push
// (push does not imply delete).
func (a *App) ChartDeleteRepo(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, error) {
	return a.chartWritableRepo(ctx, p, name, chartctl.RobotDelete)
}

func (a *App) chartWritableRepo(ctx context.Context, p *chartctl.Principal, name string, act chartctl.RobotPermission) (*chartctl.Repository, error) {
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	// Visibility first, as every decision and every protocol takes it (a
	// repository the caller cannot see is 404, the OCI registry's answer
	// too); then a robot's permissions, which say more than the scope they
	// amount to.
	if _, err := a.VisibleRepo(ctx, p, name); err != nil {
		return nil, err
	}
	if err := checkRobotAct(p, act); err != nil {
		return nil, err
	}
	r, err := a.WritableRepo(ctx, p, name, chartctl.RepoRoleWrite)
	if err != nil {
		return nil, err
	}
	if r.ReadOnly() {
		return nil, ReadOnly(r)
	}
	return r, nil
}

// ChartWriteDecision is the decision of ChartPushRepo (act push) or
// ChartDeleteRepo (act delete) on a repository the caller loaded and p
// can see (p.CanSeeRepo), for transports that load it themselves (the
// OCI registry): nil, or EFORBIDDEN saying what is missing. A mirror is
// checked apart (MirrorReadOnly), as it is no refusal of the caller.
func ChartWriteDecision(p *chartctl.Principal, r *chartctl.Repository, act chartctl.RobotPermission) error {
	if p == nil {
		return chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	if err := checkRobotAct(p, act); err != nil {
		return err
	}
	if !p.Scopes.Allows(chartctl.ScopeRepoWrite) {
		return chartctl.ScopeRequired(chartctl.ScopeRepoWrite)
	}
	if !p.RepoRole(r).AtLeast(chartctl.RepoRoleWrite) {
		return ForbiddenRole(chartctl.RepoRoleWrite, r)
	}
	return nil
}

// checkRobotAct refuses a robot without permission act (nil p: not a
// robot; the caller refuses anonymous writes).
func checkRobotAct(p *chartctl.Principal, act chartctl.RobotPermission) error {
	if p != nil && p.Robot != nil && !p.Permits(act) {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Robot account %s may not %s chart versions (its permissions: %s); an owner of organization %q can change them (PATCH /v1/organizations/%s/robots/%s).",
			p.Robot.FullName(), act, strings.Join(p.Robot.Permissions.Strings(), ", "), p.Robot.Organization, p.Robot.Organization, p.Robot.Name)
	}
	return nil
}

// RequestSync asks for a sync of the mirror repository name now, for p
// (repo:write, maintainer): the status becomes syncing, with an audit
// entry (repository.sync) in the same transaction, and the syncer is
// woken (WakeMirror). Returns ECONFLICT when the repository is not a
// mirror.
func (a *App) RequestSync(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, error) {
	r, err := a.WritableRepo(ctx, p, name, chartctl.RepoRoleWrite)
	if err != nil {
		return nil, err
	}
	if r.Mirror == nil {
		return nil, chartctl.Errorf(chartctl.ECONFLICT, "Repository %q is not a mirror: only a mirror repository syncs from an upstream.", r.Name)
	}
	// The stored record, not the cached one: the state a sync may have
	// just written is kept.
	cur, err := a.Store.Repository(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	if cur.ID != r.ID || cur.Mirror == nil {
		return nil, RepoNotFound(name)
	}
	st := cur.Mirror.MirrorState
	st.Status, st.Error = chartctl.MirrorSyncing, ""
	if err := a.Store.SetMirrorState(a.Record(ctx, "repository.sync", r.Name, r.Organization), r.Name, r.ID, st); err != nil {
		return nil, err
	}
	a.ForgetRepository(r.Name)
	a.wakeMirror(r.Name)
	m := *cur.Mirror
	m.MirrorState = st
	out := *cur
	out.Mirror = &m
	return &out, nil
}

// wakeMirror tells the syncer, if any, that mirror repo wants a sync.
func (a *App) wakeMirror(repo string) {
	if a.WakeMirror != nil {
		a.WakeMirror(repo)
	}
}

// PutMirrored commits u, downloaded from the upstream of the mirror
// repository r, as a chart version of r: the one way charts enter a
// mirror. created is the upstream's creation time of the version (zero:
// now). It is PutChart otherwise, with its audit entry and chart.pushed
// event, whose actor is the one ctx carries (internal/mirror's).
func (a *App) PutMirrored(ctx context.Context, r *chartctl.Repository, u *Upload, created time.Time) (*chartctl.ChartVersion, bool, error) {
	return a.PutChart(ctx, r, u, PutOptions{CreatedAt: created, mirror: true})
}

// mirrorData is a mirror as /v1 shows it, for event data.
func mirrorData(m *chartctl.Mirror) map[string]any {
	var last any
	if m.LastSyncAt != nil {
		last = ts(*m.LastSyncAt)
	}
	d := map[string]any{"url": m.URL, "interval": FormatDuration(m.Interval), "last_sync_at": last, "status": string(m.Status)}
	if m.Username != "" {
		d["username"] = m.Username
	}
	if m.Status == chartctl.MirrorError && m.Error != "" {
		d["error"] = m.Error
	}
	return d
}
