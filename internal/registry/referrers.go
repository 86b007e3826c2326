package registry

import (
	"github.com/labstack/echo/v4"
	"net/http"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// handleReferrers answers GET /v2/<name>/referrers/<digest>: an image index
// of the manifests of name whose subject is digest, filtered by
// ?artifactType= (then OCI-Filters-Applied says so). The subject need not
// exist; an unknown one has no referrers.
func (r *Registry) handleReferrers(c echo.Context, m pathMatch) error {
	w, req := c.Response(), c.Request()
	name := m[1]
	if _, _, err := r.authorize(c, name, actionPull); err != nil {
		return err
	}
	d, err := parseDigest(m[2])
	if err != nil {
		return err
	}
	refs, err := r.OCI.Referrers(req.Context(), name, d.String())
	if err != nil {
		return err
	}
	filter := req.URL.Query().Get("artifactType")
	idx := ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{},
	}
	for _, man := range refs {
		if filter != "" && man.ArtifactType != filter {
			continue
		}
		idx.Manifests = append(idx.Manifests, ocispec.Descriptor{
			MediaType: man.MediaType, Digest: digest.Digest(man.Digest), Size: man.Size(),
			ArtifactType: man.ArtifactType, Annotations: man.Annotations,
		})
	}
	if filter != "" {
		w.Header().Set("OCI-Filters-Applied", "artifactType")
	}
	return writeJSON(w, req, http.StatusOK, ocispec.MediaTypeImageIndex, idx)
}
