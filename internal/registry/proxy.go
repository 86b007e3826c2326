package registry

import (
	"context"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// proxyManifest lets the proxy cache fill or revalidate the manifest ref
// of name when name is a chart of a proxy repository of an OCI upstream
// (app.OCIProxy), before the manifest is read from the store. stale
// reports that the upstream failed and the cached manifest is served
// (the answer says so in its Warning header). A chart the upstream does
// not have is MANIFEST_UNKNOWN; an upstream that failed with nothing
// cached is 502.
func (r *Registry) proxyManifest(ctx context.Context, repo *chartctl.Repository, name, ref string) (bool, error) {
	if repo == nil || repo.Proxy == nil || r.App.Proxies == nil {
		return false, nil
	}
	px, ok := r.App.Proxies.(app.OCIProxy)
	if !ok {
		return false, nil
	}
	if _, _, ok := app.OCIUpstream(repo); !ok {
		return false, nil
	}
	repoName, chartName, ok := chartPath(name)
	if !ok || repoName != repo.Name {
		return false, nil
	}
	stale, stored, err := px.EnsureManifest(ctx, repo, chartName, ref)
	if stored {
		// A tag or manifest is there now.
		r.absent.forget()
	}
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		e := errManifestUnknown(ref)
		e.Message = chartctl.ErrorMessage(err)
		return false, e
	}
	return stale, err
}
