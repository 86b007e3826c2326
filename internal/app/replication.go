package app

import (
	"context"
	"net/netip"
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/netguard"
)

// This file holds the rules of replications (CONTRACT §18 "Federation"):
// who may manage them (admins of the source repository), what a target
// and a filter may be, and what `run` queues. The copies themselves run
// in internal/replication.

// ReplicationInput is what a caller sends to create a replication.
type ReplicationInput struct {
	Name     string
	Source   string
	Target   string
	Username string
	Password string
	// FilterName is a glob over chart names; FilterVersion a SemVer range.
	FilterName, FilterVersion string
	// On lists "push" and "delete"; nil means ["push"].
	On []string
}

// ReplicationTarget is a parsed replication target.
type ReplicationTarget struct {
	// OCI is true for oci://HOST/PATH; false for a chartctl
	// http(s)://HOST/helm/REPO reached through its ChartMuseum API.
	OCI bool
	// Host is HOST[:PORT]; Path the OCI namespace (without slashes at
	// either end); Repo the chartctl repository; Scheme https or http.
	Host, Path, Repo, Scheme string
}

// ParseReplicationTarget reads a target: oci://HOST/PATH, or a chartctl
// https://HOST/helm/REPO (plain http only for hosts the operator lists in
// plainHTTP). Returns EINVALID naming "target".
func ParseReplicationTarget(raw string, plainHTTP []string) (*ReplicationTarget, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || len(raw) > 2048 || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, chartctl.Invalid("target", "target must be oci://HOST/PATH or a chartctl https://HOST/helm/REPO, without credentials (give them as username and password, which are stored encrypted).")
	}
	path := strings.Trim(u.Path, "/")
	switch u.Scheme {
	case "oci":
		if path == "" || strings.Contains(path, "//") || strings.ToLower(path) != path {
			return nil, chartctl.Invalid("target", "target oci://HOST/PATH needs a lowercase PATH (the namespace the charts go under), not %q.", raw)
		}
		return &ReplicationTarget{OCI: true, Host: u.Host, Path: path, Scheme: "https"}, nil
	case "https", "http":
		repo, ok := strings.CutPrefix(path, "helm/")
		if !ok || repo == "" || strings.Contains(repo, "/") || chartctl.ValidateName("target", repo) != nil {
			return nil, chartctl.Invalid("target", "target %q is not a chartctl repository URL: use https://HOST/helm/REPO (or oci://HOST/PATH for any OCI registry).", raw)
		}
		if u.Scheme == "http" && !hostListed(u.Host, plainHTTP) {
			return nil, chartctl.Invalid("target", "target %q is plain http: use https, or start the server with --plain-http-upstreams %s.", raw, u.Host)
		}
		return &ReplicationTarget{Host: u.Host, Repo: repo, Scheme: u.Scheme}, nil
	}
	return nil, chartctl.Invalid("target", "target must be oci://HOST/PATH or a chartctl https://HOST/helm/REPO, not %q.", raw)
}

// hostListed reports whether host (HOST[:PORT]) is one of hosts.
func hostListed(host string, hosts []string) bool {
	for _, h := range hosts {
		if strings.EqualFold(strings.TrimSpace(h), host) {
			return true
		}
	}
	return false
}

// replicationAdmin loads the source repository, which p must administer.
func (a *App) replicationAdmin(ctx context.Context, p *chartctl.Principal, source string) (*chartctl.Repository, error) {
	return a.WritableRepo(ctx, p, source, chartctl.RepoRoleAdmin)
}

// CreateReplication validates in and stores a replication of in.Source,
// which p must administer. Errors are EINVALID naming the field, ENOTFOUND
// for a source p cannot see, EFORBIDDEN, ECONFLICT for a taken name.
func (a *App) CreateReplication(ctx context.Context, p *chartctl.Principal, in ReplicationInput) (*chartctl.Replication, error) {
	if err := chartctl.ValidateName("name", in.Name); err != nil {
		return nil, err
	}
	if in.Source == "" {
		return nil, chartctl.Invalid("source", "source is required: the repository to replicate.")
	}
	repo, err := a.replicationAdmin(ctx, p, in.Source)
	if err != nil {
		return nil, err
	}
	t, err := ParseReplicationTarget(in.Target, a.Config.PlainHTTPUpstreams)
	if err != nil {
		return nil, err
	}
	host := t.Host
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	if ip, err := netip.ParseAddr(strings.Trim(strings.Split(host, "]")[0], "[")); err == nil && !a.Config.AllowPrivateUpstreams && netguard.PrivateAddr(ip) {
		return nil, chartctl.Invalid("target", "target points to a private or loopback address (%s), which this server refuses (start it with %s to allow it).", ip, FlagAllowPrivateUpstreams)
	}
	if in.FilterName != "" {
		if err := chartctl.ValidateRepoPatterns("filter.name", []string{in.FilterName}); err != nil {
			return nil, chartctl.Invalid("filter.name", "filter.name %q is not a valid glob (such as web-*).", in.FilterName)
		}
	}
	if in.FilterVersion != "" {
		if _, err := semver.NewConstraint(in.FilterVersion); err != nil || len(in.FilterVersion) > 200 {
			return nil, chartctl.Invalid("filter.version", "filter.version %q is not a SemVer range (such as ^1.2 or >=2.0.0 <3).", in.FilterVersion)
		}
	}
	on := in.On
	if on == nil {
		on = []string{string(chartctl.ReplicationPush)}
	}
	var ops []chartctl.ReplicationOp
	for _, o := range on {
		op := chartctl.ReplicationOp(strings.TrimSpace(o))
		if op != chartctl.ReplicationPush && op != chartctl.ReplicationDelete {
			return nil, chartctl.Invalid("on", "on lists push and delete, not %q.", o)
		}
		if !containsOp(ops, op) {
			ops = append(ops, op)
		}
	}
	if len(in.Username) > 256 || strings.ContainsAny(in.Username, ":\r\n") {
		return nil, chartctl.Invalid("username", "username must be at most 256 characters, without ':' or line breaks.")
	}
	r := &chartctl.Replication{ID: NewID("rpl_"), Name: in.Name, Source: repo.Name, SourceID: repo.ID, Target: in.Target,
		Username: in.Username, Filter: chartctl.ReplicationFilter{Name: in.FilterName, Version: in.FilterVersion}, On: ops,
		CreatedBy: p.User.ID, CreatedAt: a.Now().UTC()}
	if in.Password != "" {
		if len(in.Password) > 4096 || strings.ContainsAny(in.Password, "\r\n") {
			return nil, chartctl.Invalid("password", "password must be at most 4096 characters, without line breaks.")
		}
		if a.Secrets == nil {
			return nil, chartctl.Errorf(chartctl.EUNAVAILABLE, "Replication passwords cannot be stored: the server has no secrets key.")
		}
		if r.Password, err = a.Secrets.Seal([]byte(in.Password)); err != nil {
			return nil, err
		}
	}
	if err := a.Store.CreateReplication(a.Record(ctx, "replication.create", r.Name, repo.Organization), r); err != nil {
		return nil, err
	}
	a.wakeReplication()
	return r, nil
}

func containsOp(ops []chartctl.ReplicationOp, op chartctl.ReplicationOp) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// Replication returns the replication name, whose source p must
// administer (ENOTFOUND otherwise, so names are not revealed).
func (a *App) Replication(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Replication, error) {
	r, err := a.Store.Replication(ctx, name)
	if err != nil {
		return nil, err
	}
	if _, err := a.replicationAdmin(ctx, p, r.Source); err != nil {
		if code := chartctl.ErrorCode(err); code == chartctl.EFORBIDDEN || code == chartctl.ENOTFOUND {
			return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Replication %q not found.", name)
		}
		return nil, err
	}
	return r, nil
}

// Replications lists the replications of the repositories p
// administers, by name.
func (a *App) Replications(ctx context.Context, p *chartctl.Principal) ([]*chartctl.Replication, error) {
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	all, err := a.Store.Replications(ctx)
	if err != nil {
		return nil, err
	}
	out := []*chartctl.Replication{}
	for _, r := range all {
		if _, err := a.replicationAdmin(ctx, p, r.Source); err == nil {
			out = append(out, r)
		} else if c := chartctl.ErrorCode(err); c != chartctl.EFORBIDDEN && c != chartctl.ENOTFOUND {
			return nil, err
		}
	}
	return out, nil
}

// DeleteReplication deletes a replication and what it had still to do.
func (a *App) DeleteReplication(ctx context.Context, p *chartctl.Principal, name string) error {
	r, err := a.Replication(ctx, p, name)
	if err != nil {
		return err
	}
	repo, _ := a.Store.Repository(ctx, r.Source)
	org := ""
	if repo != nil {
		org = repo.Organization
	}
	return a.Store.DeleteReplication(a.Record(ctx, "replication.delete", name, org), name)
}

// RunReplication queues a copy of every version the source holds now
// that passes the filter, behind the tasks already queued, and returns
// how many.
func (a *App) RunReplication(ctx context.Context, p *chartctl.Principal, name string) (int, error) {
	r, err := a.Replication(ctx, p, name)
	if err != nil {
		return 0, err
	}
	versions, err := a.Store.IndexEntries(ctx, r.Source)
	if err != nil {
		return 0, err
	}
	var tasks []*chartctl.ReplicationTask
	for _, v := range versions {
		if !r.MatchesName(v.Name) || !MatchesVersionRange(r.Filter.Version, v.Version) {
			continue
		}
		tasks = append(tasks, &chartctl.ReplicationTask{Op: chartctl.ReplicationPush, Chart: v.Name, Version: v.Version})
	}
	repo, _ := a.Store.Repository(ctx, r.Source)
	org := ""
	if repo != nil {
		org = repo.Organization
	}
	if err := a.Store.EnqueueReplicationTasks(a.Record(ctx, "replication.run", name, org), name, tasks); err != nil {
		return 0, err
	}
	a.wakeReplication()
	return len(tasks), nil
}

// ReplicationStatus returns how the replication stands.
func (a *App) ReplicationStatus(ctx context.Context, p *chartctl.Principal, name string) (chartctl.ReplicationStatus, error) {
	if _, err := a.Replication(ctx, p, name); err != nil {
		return chartctl.ReplicationStatus{}, err
	}
	return a.Store.ReplicationStatus(ctx, name)
}

// MatchesVersionRange reports whether version is in the SemVer range
// ("" matches everything; a version that is not SemVer matches only "").
func MatchesVersionRange(rng, version string) bool {
	if rng == "" {
		return true
	}
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return false
	}
	v, err := semver.NewVersion(version)
	return err == nil && c.Check(v)
}

func (a *App) wakeReplication() {
	if a.WakeReplication != nil {
		a.WakeReplication()
	}
}

// ReplicationData is a replication as /v1 shows it (never its password).
func ReplicationData(r *chartctl.Replication) map[string]any {
	on := []string{}
	for _, o := range r.On {
		on = append(on, string(o))
	}
	d := map[string]any{"name": r.Name, "source": r.Source, "target": r.Target, "on": on, "created_at": ts(r.CreatedAt)}
	if r.Username != "" {
		d["username"] = r.Username
	}
	if r.Filter.Name != "" || r.Filter.Version != "" {
		f := map[string]any{}
		if r.Filter.Name != "" {
			f["name"] = r.Filter.Name
		}
		if r.Filter.Version != "" {
			f["version"] = r.Filter.Version
		}
		d["filter"] = f
	}
	return d
}
