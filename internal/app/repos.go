package app

import (
	"context"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// RepositoryChanges are the fields UpdateRepository may change; nil
// leaves a field as it is.
type RepositoryChanges struct {
	Description *string
	Visibility  *string
}

// UpdateRepository changes the description and visibility of the
// repository named name, which p may change with the SettingsRole role
// (repo:write scope). Returns EINVALID naming the field for a description
// over 1024 characters or an unknown visibility.
func (a *App) UpdateRepository(ctx context.Context, p *chartctl.Principal, name string, ch RepositoryChanges) (*chartctl.Repository, error) {
	r, err := a.WritableRepo(ctx, p, name, chartctl.RoleMaintainer)
	if err != nil {
		return nil, err
	}
	if need := SettingsRole(r); !p.RepoRole(r).AtLeast(need) {
		return nil, ForbiddenRole(need, r)
	}
	var desc *string
	if ch.Description != nil {
		d := strings.TrimSpace(*ch.Description)
		if len(d) > 1024 {
			return nil, chartctl.Invalid("description", "description must be at most 1024 characters.")
		}
		desc = &d
	}
	var vis *chartctl.Visibility
	if ch.Visibility != nil {
		v := chartctl.Visibility(*ch.Visibility)
		if !v.Valid() {
			return nil, chartctl.Invalid("visibility", "visibility must be \"private\" or \"public\".")
		}
		vis = &v
	}
	next := *r
	if desc != nil {
		next.Description = *desc
	}
	if vis != nil {
		next.Visibility = *vis
	}
	rctx := a.Record(ctx, "repository.update", r.Name, r.Organization,
		a.NewEvent(ctx, chartctl.EventRepositoryUpdated, r.Name, r.Organization, repoPath(r.Name), r.Name, RepositoryData(&next)))
	r, err = a.Store.UpdateRepository(rctx, r.Name, desc, vis)
	// The cached record goes whatever happened: the next read sees the
	// stored one (a visibility change takes effect at once).
	a.ForgetRepository(name)
	if err != nil {
		return nil, err
	}
	a.Committed()
	return r, nil
}
