package app

import (
	"context"

	"github.com/chartctl/chartctl/internal/artifacthub"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// ArtifactHubRole is the repository role changing a repository's
// artifacthub-repo.yml needs: admin, because the file claims the
// repository on Artifact Hub (verified publisher, ownership).
const ArtifactHubRole = chartctl.RepoRoleAdmin

// ArtifactHub returns repository name's Artifact Hub metadata, which p
// must be allowed to read: nil when its admins set none. It is the same
// for /v1, the Helm repository's artifacthub-repo.yml and the OCI
// "artifacthub.io" tag, which Artifact Hub reads anonymously from a
// public repository.
func (a *App) ArtifactHub(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.ArtifactHubRepo, error) {
	r, err := a.ReadableRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	return r.ArtifactHub, nil
}

// SetArtifactHub replaces repository name's Artifact Hub metadata (an
// empty one removes it): the admin role of the repository. The metadata
// must be valid (artifacthub.Validate, EINVALID). Mirrors take it too:
// the file describes where chartctl serves the charts, not where they
// came from.
func (a *App) SetArtifactHub(ctx context.Context, p *chartctl.Principal, name string, meta *chartctl.ArtifactHubRepo) (*chartctl.ArtifactHubRepo, error) {
	r, err := a.WritableRepo(ctx, p, name, ArtifactHubRole)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		meta = &chartctl.ArtifactHubRepo{}
	}
	if err := artifacthub.Validate(meta); err != nil {
		return nil, err
	}
	next := *r
	next.ArtifactHub = meta
	if meta.Empty() {
		next.ArtifactHub = nil
	}
	rctx := a.Record(ctx, "repository.artifacthub", r.Name, r.Organization,
		a.NewEvent(ctx, chartctl.EventRepositoryUpdated, r.Name, r.Organization, repoPath(r.Name)+"/artifacthub", r.Name, RepositoryData(&next)))
	r, err = a.Store.UpdateRepository(rctx, r.Name, chartctl.RepositoryUpdate{ArtifactHub: meta})
	// The cached record goes whatever happened: the next read, on this
	// replica and (by the change feed) the others, serves the new file.
	a.ForgetRepository(name)
	if err != nil {
		return nil, err
	}
	a.Committed()
	return r.ArtifactHub, nil
}
