package registry

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// Garbage collection (docs/oci.md): every Config.GCInterval, and on demand
// (chartctl admin gc), the registry
//
//  1. deletes upload sessions not updated for Config.UploadExpiry, and their
//     data, and data no session owns that is older than the grace period (a
//     crash between creating the data and the session, or between deleting
//     the session and its data);
//  2. unlinks blobs that no manifest of their name refers to and that were
//     linked longer ago than Config.GCGrace: a push links its blobs before
//     its manifest, so the grace period is the time a client has between
//     the two;
//  3. deletes blobs nothing refers to any more (no chart version, no link)
//     that were committed longer ago than Config.GCGrace, each through the
//     store's DeleteUnreferencedBlob, so a blob a writer on any replica has
//     claimed (between committing it and its record or link) is never
//     deleted. Deleting a chart version or an OCI blob leaves a younger
//     blob to this collection.

// GCReport says what a garbage collection removed, or would remove.
type GCReport struct {
	// DryRun is set when nothing was removed.
	DryRun bool `json:"dry_run"`
	// Sessions are the expired upload sessions.
	Sessions []string `json:"sessions"`
	// Links are the unreferenced blob links, "name@digest".
	Links []string `json:"links"`
	// Blobs are the blob digests no longer referenced by anything.
	Blobs []string `json:"blobs"`
	// Bytes is the size of those blobs.
	Bytes int64 `json:"bytes"`
}

// Run collects garbage every Config.GCInterval until stop closes.
func (r *Registry) Run(stop <-chan struct{}) {
	r.init()
	if r.Config.GCInterval <= 0 {
		return
	}
	t := time.NewTicker(r.Config.GCInterval)
	defer t.Stop()
	// Replicas sharing a store collect once per interval between them:
	// the lease lasts an interval and its holder renews it, so the others
	// take over only when it stops.
	holder := r.App.Replica
	if holder == "" {
		holder = app.NewID("gc_")
	}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if ok, err := r.App.Store.AcquireLease(context.Background(), "registry-gc", holder, r.Config.GCInterval); err != nil {
				r.Logger.Error("registry garbage collection", "err", err)
				continue
			} else if !ok {
				continue
			}
			rep, err := r.CollectGarbage(context.Background(), false)
			if err != nil {
				r.Logger.Error("registry garbage collection", "err", err)
				continue
			}
			if n := len(rep.Sessions) + len(rep.Links) + len(rep.Blobs); n > 0 {
				r.Logger.Info("registry garbage collection", "sessions", len(rep.Sessions), "links", len(rep.Links), "blobs", len(rep.Blobs), "bytes", rep.Bytes)
			}
		}
	}
}

// CollectGarbage runs one garbage collection; with dryRun it only reports
// what would go.
func (r *Registry) CollectGarbage(ctx context.Context, dryRun bool) (*GCReport, error) {
	r.init()
	rep := &GCReport{DryRun: dryRun, Sessions: []string{}, Links: []string{}, Blobs: []string{}}
	now := r.Now()
	uploads, err := r.OCI.Uploads(ctx)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, u := range uploads {
		if now.Sub(u.UpdatedAt) <= r.Config.UploadExpiry {
			live[u.ID] = true
			continue
		}
		rep.Sessions = append(rep.Sessions, u.ID)
		if dryRun {
			continue
		}
		unlock := r.sessions.Lock(u.ID)
		err := r.OCI.DeleteUpload(ctx, u.ID)
		if err == nil || chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			r.removeSessionData(ctx, u.ID)
		}
		unlock()
		if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return nil, err
		}
	}
	if !dryRun {
		err := r.sessionData().walk(ctx, func(id string, modified time.Time) error {
			if live[id] || now.Sub(modified) <= r.Config.GCGrace {
				return nil
			}
			if _, err := r.OCI.Upload(ctx, id); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				r.removeSessionData(ctx, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	links, err := r.OCI.UnreferencedLinks(ctx, now.Add(-r.Config.GCGrace))
	if err != nil {
		return nil, err
	}
	candidates := map[string]bool{}
	for _, l := range links {
		rep.Links = append(rep.Links, l.Name+"@"+l.Digest)
		candidates[l.Digest] = true
		if dryRun {
			continue
		}
		if err := r.OCI.UnlinkBlob(ctx, l.Name, l.Digest); err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return nil, err
		}
	}
	var all []string
	if err := r.Blobs.Walk(ctx, func(d string) error {
		all = append(all, d)
		return nil
	}); err != nil {
		return nil, err
	}
	cutoff := now.Add(-r.Config.GCGrace)
	for _, d := range all {
		if dryRun {
			names, err := r.OCI.BlobNames(ctx, d)
			if err != nil {
				return nil, err
			}
			ref, err := r.App.Store.BlobReferenced(ctx, d)
			if err != nil {
				return nil, err
			}
			// In a dry run the links above are still there: a blob whose
			// every link would go counts as garbage.
			if ref && !(candidates[d] && allCandidates(names, d, rep.Links)) {
				continue
			}
			if ref && len(names) == 0 {
				continue
			}
			if !r.App.BlobCollectable(ctx, d, cutoff) {
				continue
			}
			rep.Blobs = append(rep.Blobs, d)
			rep.Bytes += r.blobSize(ctx, d)
			continue
		}
		// Most blobs are referenced: that is asked of the database before
		// the blob store is asked for a size.
		if ref, err := r.App.Store.BlobReferenced(ctx, d); err != nil {
			return nil, err
		} else if ref {
			continue
		}
		size := r.blobSize(ctx, d)
		if r.App.DeleteOrphan(ctx, d, cutoff) {
			rep.Blobs = append(rep.Blobs, d)
			rep.Bytes += size
		}
	}
	return rep, nil
}

// allCandidates reports whether every name holding d is among the links
// to be removed.
func allCandidates(names []string, d string, links []string) bool {
	set := map[string]bool{}
	for _, l := range links {
		set[l] = true
	}
	for _, n := range names {
		if !set[n+"@"+d] {
			return false
		}
	}
	return true
}

func (r *Registry) blobSize(ctx context.Context, d string) int64 {
	b, err := r.Blobs.Open(ctx, d)
	if err != nil {
		return 0
	}
	defer b.Close()
	return b.Size()
}

// RegisterAdmin adds POST /admin/gc[?dry_run=true] to the server's
// authenticated, rate-limited /v1 group: a garbage collection now, for
// `chartctl admin gc`. Server admins only, with a credential carrying every
// scope.
func (r *Registry) RegisterAdmin(api *echo.Group) {
	api.POST("/admin/gc", r.handleAdminGC)
}

func (r *Registry) handleAdminGC(c echo.Context) error {
	if err := app.RequireAdmin(httpx.PrincipalOf(c)); err != nil {
		return err
	}
	dry := false
	if v := c.QueryParam("dry_run"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return chartctl.Invalid("dry_run", "dry_run must be true or false.")
		}
		dry = b
	}
	rep, err := r.CollectGarbage(c.Request().Context(), dry)
	if err != nil {
		return err
	}
	// The server's audit middleware records a refused or failed run; a
	// successful one is recorded here, as the store writes no entry for it.
	target := "registry"
	if dry {
		target = "registry (dry run)"
	}
	r.App.AuditSuccess(c.Request().Context(), "registry.gc", target, "")
	return httpx.Data(c, client.GCReport{DryRun: rep.DryRun, Sessions: rep.Sessions, Links: rep.Links, Blobs: rep.Blobs, Bytes: rep.Bytes})
}
