package app

import (
	"context"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// RepoQuota returns the quota and usage of repository name, which p must
// be allowed to read.
func (a *App) RepoQuota(ctx context.Context, p *chartctl.Principal, name string) (chartctl.Quota, chartctl.Usage, error) {
	r, err := a.ReadableRepo(ctx, p, name)
	if err != nil {
		return chartctl.Quota{}, chartctl.Usage{}, err
	}
	return a.Store.Quota(ctx, chartctl.QuotaRepository, r.Name)
}

// SetRepoQuota replaces the quota of repository name: server admins set
// any; an organization's owners set those of its repositories (§15).
func (a *App) SetRepoQuota(ctx context.Context, p *chartctl.Principal, name string, q chartctl.Quota) error {
	if err := validQuota(q); err != nil {
		return err
	}
	r, err := a.WritableRepo(ctx, p, name, chartctl.RepoRoleRead)
	if err != nil {
		return err
	}
	if RequireAdmin(p) != nil && (r.Organization == "" || !p.OrgRole(r.Organization).AtLeast(chartctl.RoleOwner)) {
		if r.Organization == "" {
			return chartctl.Errorf(chartctl.EFORBIDDEN, "Only a server admin may set the quota of personal repository %q.", r.Name)
		}
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Setting the quota of repository %q needs the owner role in organization %q.", r.Name, r.Organization)
	}
	if r.Proxy != nil && (q.MaxBytes != nil || q.MaxVersions != nil) {
		// Decision 12: a proxy's cache counts against no quota, so a
		// quota on it would bound nothing. Its size is bounded by its
		// retention instead.
		return chartctl.Invalid("repo", "Repository %q is a proxy: what it caches counts against no quota. Bound the cache with its retention instead (proxy.retention, chartctl repo create --proxy-retention).", r.Name)
	}
	// Bound to the repository p was authorized against (§18 decision 2).
	q.RepositoryID = r.ID
	return a.Store.SetQuota(a.Record(ctx, "quota.set", "repository/"+r.Name, r.Organization), chartctl.QuotaRepository, r.Name, q)
}

// OrgQuota returns the quota and usage of organization name, which p must
// see.
func (a *App) OrgQuota(ctx context.Context, p *chartctl.Principal, name string) (chartctl.Quota, chartctl.Usage, error) {
	if p == nil {
		return chartctl.Quota{}, chartctl.Usage{}, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	if !p.Scopes.Allows(chartctl.ScopeOrgRead) {
		return chartctl.Quota{}, chartctl.Usage{}, chartctl.ScopeRequired(chartctl.ScopeOrgRead)
	}
	if chartctl.ValidateName("organization", name) != nil || !p.CanSeeOrg(name) {
		return chartctl.Quota{}, chartctl.Usage{}, chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", name)
	}
	return a.Store.Quota(ctx, chartctl.QuotaOrganization, name)
}

// SetOrgQuota replaces the quota of organization name (server admins).
func (a *App) SetOrgQuota(ctx context.Context, p *chartctl.Principal, name string, q chartctl.Quota) error {
	if err := RequireAdmin(p); err != nil {
		return err
	}
	if err := validQuota(q); err != nil {
		return err
	}
	return a.Store.SetQuota(a.Record(ctx, "quota.set", "organization/"+name, name), chartctl.QuotaOrganization, name, q)
}

func validQuota(q chartctl.Quota) error {
	if q.MaxBytes != nil && *q.MaxBytes < 0 {
		return chartctl.Invalid("max_bytes", "max_bytes must be a number of bytes (0 or more), or null for unlimited.")
	}
	if q.MaxVersions != nil && *q.MaxVersions < 0 {
		return chartctl.Invalid("max_versions", "max_versions must be 0 or more, or null for unlimited.")
	}
	return nil
}

// CheckBlobQuota refuses with EQUOTA a blob of size bytes pushed over OCI
// into repo when it alone would take the repository or its organization
// past a max_bytes quota (CONTRACT §18 decision 12). A blob counts once a
// manifest refers to it (the store checks that, atomically, when the
// manifest is stored); this check refuses the bytes before they are kept,
// so a push into a full repository stores nothing.
func (a *App) CheckBlobQuota(ctx context.Context, repo *chartctl.Repository, size int64) error {
	scopes := [][2]string{{chartctl.QuotaRepository, repo.Name}}
	if repo.Organization != "" {
		scopes = append(scopes, [2]string{chartctl.QuotaOrganization, repo.Organization})
	}
	for _, sc := range scopes {
		// The usage is counted only where there is a limit to hold it
		// to: counting it reads every OCI record of the scope.
		if q, err := a.Store.QuotaLimits(ctx, sc[0], sc[1]); err != nil {
			return err
		} else if q.MaxBytes == nil {
			continue
		}
		q, u, err := a.Store.Quota(ctx, sc[0], sc[1])
		if err != nil {
			return err
		}
		if q.MaxBytes != nil && u.Bytes+size > *q.MaxBytes {
			return chartctl.Errorf(chartctl.EQUOTA, "Quota exceeded: the max_bytes quota of %s %q is %d bytes, with %d bytes used; this upload needs %d more. Delete chart versions or OCI artifacts, or ask an admin to raise the quota.",
				sc[0], sc[1], *q.MaxBytes, u.Bytes, size)
		}
	}
	return nil
}
