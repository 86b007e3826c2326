package helmrepo

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/artifacthub"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// handleArtifactHub answers GET and HEAD /helm/:repo/artifacthub-repo.yml:
// the repository's Artifact Hub metadata file, beside index.yaml where
// Artifact Hub looks for it, to whoever may read the repository (Artifact
// Hub itself reads public ones anonymously). A repository whose admins set
// none answers 404, which Artifact Hub takes as "no metadata".
func (h *Handler) handleArtifactHub(c echo.Context) error {
	r, _, err := h.repo(c)
	if err != nil {
		return err
	}
	if r.ArtifactHub.Empty() {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q has no artifacthub-repo.yml: an admin of the repository sets one with chartctl repo artifacthub set %s FILE.", r.Name, r.Name)
	}
	b, err := artifacthub.YAML(r.ArtifactHub)
	if err != nil {
		return err
	}
	hd := c.Response().Header()
	hd[hdrCacheName] = hdrNoCache
	return c.Blob(http.StatusOK, "application/yaml", b)
}
