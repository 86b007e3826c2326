package registry

import (
	"context"

	"github.com/chartctl/chartctl/internal/artifacthub"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// artifactHub returns the OCI artifact of the artifacthub-repo.yml of
// name's repository when name is a chart of a repository whose admins set
// one (Artifact Hub reads it as the "artifacthub.io" tag of each chart's
// OCI repository), nil otherwise. It is built from the repository record,
// so it changes when the metadata does; nothing of it is stored. A
// manifest pushed under the tag (with oras, say) is found before it.
func (r *Registry) artifactHub(ctx context.Context, name string) (*artifacthub.Artifact, error) {
	repoName, chartName, ok := chartPath(name)
	if !ok || chart.ValidateName(chartName) != nil {
		return nil, nil
	}
	repo, err := r.App.Repository(ctx, repoName)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if repo.ArtifactHub.Empty() {
		return nil, nil
	}
	cvs, err := r.App.Store.ChartVersions(ctx, repoName, chartctl.ChartFilter{Name: chartName, Latest: true})
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND || (err == nil && len(cvs) == 0) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return artifacthub.OCI(repo.ArtifactHub)
}

// artifactHubManifest returns the manifest of artifactHub(name) when ref
// (a tag or a digest) names it, nil otherwise.
func (r *Registry) artifactHubManifest(ctx context.Context, name, ref string) (*chartctl.OCIManifest, error) {
	art, err := r.artifactHub(ctx, name)
	if art == nil || err != nil {
		return nil, err
	}
	if ref != artifacthub.Tag && ref != art.ManifestDigest {
		return nil, nil
	}
	return &chartctl.OCIManifest{Name: name, Digest: art.ManifestDigest, MediaType: artifacthub.ManifestMediaType,
		ArtifactType: artifacthub.ConfigMediaType, Content: art.Manifest, Blobs: []string{art.ConfigDigest, art.LayerDigest}}, nil
}

// artifactHubBlob returns the config or layer of artifactHub(name) whose
// digest is d, nil when neither is.
func (r *Registry) artifactHubBlob(ctx context.Context, name, d string) ([]byte, error) {
	art, err := r.artifactHub(ctx, name)
	if art == nil || err != nil {
		return nil, err
	}
	switch d {
	case art.ConfigDigest:
		return art.Config, nil
	case art.LayerDigest:
		return art.Layer, nil
	}
	return nil, nil
}
