package registry

import (
	"context"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ChartArtifact returns what replication (internal/replication) copies
// to an OCI target for chart version cv: its manifest as this registry
// serves it (the one pushed over OCI, else the derived one), the derived
// config's bytes (nil when the manifest was pushed, whose config is a
// stored blob), and the manifests that refer to it or to its alternates
// (signatures, SBOMs), whose blobs are stored.
func (r *Registry) ChartArtifact(ctx context.Context, cv *chartctl.ChartVersion) (*chartctl.OCIManifest, []byte, []*chartctl.OCIManifest, error) {
	name := cv.Repository + "/" + cv.Name
	m, config, err := r.chartManifest(ctx, name, cv)
	if err != nil {
		return nil, nil, nil, err
	}
	digests := []string{m.Digest}
	alts, err := r.OCI.ChartAlternates(ctx, cv.Repository, cv.Name, cv.Version)
	if err != nil {
		return nil, nil, nil, err
	}
	digests = append(digests, alts...)
	var refs []*chartctl.OCIManifest
	for _, d := range digests {
		rs, err := r.OCI.Referrers(ctx, name, d)
		if err != nil {
			return nil, nil, nil, err
		}
		refs = append(refs, rs...)
	}
	return m, config, refs, nil
}
