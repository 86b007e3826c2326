package app

import (
	"context"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// VisibilityMessage is the EINVALID message of an unknown visibility.
const VisibilityMessage = `visibility must be "private", "internal" (every signed-in user reads it) or "public".`

// RepositoryChanges are the fields UpdateRepository may change; nil
// leaves a field as it is.
type RepositoryChanges struct {
	Description *string
	Visibility  *string
	// IndexFormat is "json" or "yaml".
	IndexFormat *string
	// Mirror changes a mirror's settings (its fields that are set); a
	// repository that is not a mirror refuses it.
	Mirror *MirrorInput
	// Proxy changes a proxy's settings (its fields that are set); a
	// repository that is not a proxy refuses it.
	Proxy *ProxyInput
}

// UpdateRepository changes the description, visibility and, for a
// mirror, the mirror settings of the repository named name, which p may
// change with the SettingsRole role (repo:write scope). Returns EINVALID
// naming the field for a description over 1024 characters, an unknown
// visibility, mirror settings of a repository that is not a mirror, or
// invalid mirror settings (see NewMirror). New mirror settings wake the
// syncer, which follows the new upstream at once.
func (a *App) UpdateRepository(ctx context.Context, p *chartctl.Principal, name string, ch RepositoryChanges) (*chartctl.Repository, error) {
	r, err := a.WritableRepo(ctx, p, name, SettingsRole)
	if err != nil {
		return nil, err
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
			return nil, chartctl.Invalid("visibility", "%s", VisibilityMessage)
		}
		vis = &v
	}
	var format *chartctl.IndexFormat
	if ch.IndexFormat != nil {
		f := chartctl.IndexFormat(*ch.IndexFormat)
		if !f.Valid() {
			return nil, chartctl.InvalidIndexFormat(f)
		}
		format = &f
	}
	next := *r
	if format != nil {
		next.IndexFormat = *format
	}
	if desc != nil {
		next.Description = *desc
	}
	if vis != nil {
		next.Visibility = *vis
	}
	var mirror *chartctl.MirrorSettings
	if ch.Mirror != nil {
		if r.Mirror == nil {
			return nil, chartctl.Invalid("mirror", "Repository %q is not a mirror: a repository is created as a mirror (or not) and stays so.", r.Name)
		}
		s, err := a.mirrorSettings(r.Mirror.MirrorSettings, *ch.Mirror)
		if err != nil {
			return nil, err
		}
		m := *r.Mirror
		m.MirrorSettings = s
		next.Mirror, mirror = &m, &s
	}
	var proxy *chartctl.Proxy
	if ch.Proxy != nil {
		if r.Proxy == nil {
			return nil, chartctl.Invalid("proxy", "Repository %q is not a proxy: a repository is created as a proxy (or not) and stays so.", r.Name)
		}
		px, err := a.proxySettings(r.Proxy, *ch.Proxy)
		if err != nil {
			return nil, err
		}
		next.Proxy, proxy = px, px
	}
	rctx := a.Record(ctx, "repository.update", r.Name, r.Organization,
		a.NewEvent(ctx, chartctl.EventRepositoryUpdated, r.Name, r.Organization, repoPath(r.Name), r.Name, RepositoryData(&next)))
	update := chartctl.RepositoryUpdate{Description: desc, Visibility: vis, IndexFormat: format, Proxy: proxy}
	// The store has no transaction spanning both writes: new mirror
	// settings commit first, with the audit entry and event, and if the
	// description or visibility then fails to change, the request fails
	// having changed the mirror settings alone.
	if mirror != nil {
		r, err = a.Store.UpdateMirror(rctx, r.Name, *mirror)
		if err == nil && (desc != nil || vis != nil || format != nil || proxy != nil) {
			r, err = a.Store.UpdateRepository(chartctl.WithChange(ctx, nil), r.Name, update)
		}
	} else {
		r, err = a.Store.UpdateRepository(rctx, r.Name, update)
	}
	// The cached record goes whatever happened: the next read sees the
	// stored one (a visibility change takes effect at once).
	a.ForgetRepository(name)
	if err != nil {
		return nil, err
	}
	a.Committed()
	if mirror != nil {
		a.wakeMirror(r.Name)
	}
	if proxy != nil && a.Proxies != nil {
		// A new upstream or filters: what was fetched from the old one
		// is not trusted for the new.
		a.Proxies.Forget(r)
	}
	return r, nil
}
