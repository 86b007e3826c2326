package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the authorization decisions of §6 for repositories:
// effective permission is the credential's scopes ∩ the user's role. A
// missing scope is EFORBIDDEN naming it; a resource the caller cannot see
// is ENOTFOUND; a visible one the role does not allow is EFORBIDDEN naming
// the role needed. A nil principal is an anonymous caller.

// RepoNotFound is the ENOTFOUND error for the repository name.
func RepoNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", name)
}

// VisibleRepo loads the repository named name if p may see it; invisible
// and unknown ones alike are ENOTFOUND. Anonymous callers see public
// repositories. The record may be up to a second old (see repoTTL) unless
// it changed through App.
func (a *App) VisibleRepo(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, error) {
	r, err := a.repository(ctx, name)
	if err != nil {
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, RepoNotFound(name)
		}
		return nil, err
	}
	if !p.CanSeeRepo(r) {
		return nil, RepoNotFound(name)
	}
	return r, nil
}

// ReadableRepo loads a repository p may read: visibility, then the
// repo:read scope. A repository p cannot see is ENOTFOUND whatever the
// credential's scopes, on every protocol alike (the OCI registry decides
// in this order too).
func (a *App) ReadableRepo(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, error) {
	r, err := a.VisibleRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	if p != nil && !p.Scopes.Allows(chartctl.ScopeRepoRead) {
		return nil, chartctl.ScopeRequired(chartctl.ScopeRepoRead)
	}
	return r, nil
}

// WritableRepo loads a repository p may change with at least repository
// role need: visibility (ENOTFOUND), the repo:write scope, then the role
// (EFORBIDDEN). Anonymous callers get EUNAUTHORIZED.
func (a *App) WritableRepo(ctx context.Context, p *chartctl.Principal, name string, need chartctl.RepoRole) (*chartctl.Repository, error) {
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	r, err := a.VisibleRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	if !p.Scopes.Allows(chartctl.ScopeRepoWrite) {
		return nil, chartctl.ScopeRequired(chartctl.ScopeRepoWrite)
	}
	if !p.RepoRole(r).AtLeast(need) {
		return nil, ForbiddenRole(need, r)
	}
	return r, nil
}

// ForbiddenRole is the EFORBIDDEN error of a caller without repository
// role need in r.
func ForbiddenRole(need chartctl.RepoRole, r *chartctl.Repository) error {
	if r.Organization == "" {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "This needs the %s role on repository %q: its owner has it, or grants it (chartctl repo access grant).", need, r.Name)
	}
	return chartctl.Errorf(chartctl.EFORBIDDEN, "This needs the %s role on repository %q: ask an admin of the repository or an owner of organization %q for it (chartctl repo access grant).", need, r.Name, r.Organization)
}

// RequireAdmin returns EFORBIDDEN unless p is a server admin acting through
// a credential that carries the admin scope (CONTRACT §13): an admin's
// narrow credential, such as a read-only CI key or an OAuth token the admin
// approved for an application, must not reach the admin endpoints
// (creating users, admins among them, and their keys). The refusal for a
// missing admin scope says how to get it.
func RequireAdmin(p *chartctl.Principal) error {
	if !p.IsAdmin() {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Only a server admin may do this.")
	}
	if !p.Scopes.Allows(chartctl.ScopeAdmin) {
		return &chartctl.Error{Code: chartctl.EFORBIDDEN, MissingScope: chartctl.ScopeAdmin,
			Message: fmt.Sprintf("This needs the admin scope, which this credential lacks (it has %s). Sign in again with `chartctl login --scopes %s`, or use an API key with the admin scope.", p.Scopes.String(), AdminLoginScopes())}
	}
	return nil
}

// SettingsRole is the repository role changing a repository's settings
// (description, visibility, retention, webhooks) needs: maintain.
const SettingsRole = chartctl.RepoRoleMaintain

// AdminLoginScopes is the --scopes value of `chartctl login` that adds
// admin to what login asks for by default.
func AdminLoginScopes() string {
	return strings.Join(append(chartctl.Scopes(chartctl.LoginScopes).Strings(), string(chartctl.ScopeAdmin)), ",")
}
