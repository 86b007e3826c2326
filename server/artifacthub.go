package server

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/artifacthub"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file answers /v1/repositories/:repo/artifacthub (CONTRACT §18
// "Discovery"): a repository's artifacthub-repo.yml, as JSON with
// Artifact Hub's field names, or as the file itself.

// handleGetArtifactHub answers the metadata as JSON ({} when none is
// set), or as artifacthub-repo.yml to a request that accepts
// application/yaml and not JSON.
func (s *Server) handleGetArtifactHub(c echo.Context) error {
	meta, err := s.app.ArtifactHub(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	if wantsYAML(c.Request().Header.Get("Accept")) {
		b, err := artifacthub.YAML(meta)
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/yaml", b)
	}
	return httpx.Data(c, toArtifactHub(meta))
}

// handlePutArtifactHub replaces the metadata with the body: JSON with
// Artifact Hub's field names, or artifacthub-repo.yml as
// application/yaml. An empty document removes it.
func (s *Server) handlePutArtifactHub(c echo.Context) error {
	var (
		meta *chartctl.ArtifactHubRepo
		err  error
	)
	if artifacthub.IsYAML(c.Request().Header.Get(echo.HeaderContentType)) {
		body, rerr := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, httpx.MaxJSONBody))
		if rerr != nil {
			var mbe *http.MaxBytesError
			if errors.As(rerr, &mbe) {
				return chartctl.Errorf(chartctl.ETOOLARGE, "The artifacthub-repo.yml body is larger than 1 MiB.")
			}
			return chartctl.Invalid("body", "Could not read the request body.")
		}
		meta, err = artifacthub.Parse(body, true)
	} else {
		var raw json.RawMessage
		if err := httpx.BindJSON(c, &raw); err != nil {
			if chartctl.ErrorCode(err) == chartctl.EMEDIATYPE {
				return chartctl.Errorf(chartctl.EMEDIATYPE, "Send JSON with Artifact Hub's field names (Content-Type: application/json) or the artifacthub-repo.yml file (Content-Type: application/yaml).")
			}
			return err
		}
		meta, err = artifacthub.Parse(raw, false)
	}
	if err != nil {
		return err
	}
	out, err := s.app.SetArtifactHub(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), meta)
	if err != nil {
		return err
	}
	return httpx.Data(c, toArtifactHub(out))
}

// wantsYAML reports whether an Accept header asks for YAML rather than
// JSON: YAML named, and JSON not named before it.
func wantsYAML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if artifacthub.IsYAML(mt) {
			return true
		}
		if mt == "application/json" {
			return false
		}
	}
	return false
}

func toArtifactHub(a *chartctl.ArtifactHubRepo) client.ArtifactHubRepo {
	var out client.ArtifactHubRepo
	if a == nil {
		return out
	}
	out.RepositoryID = a.RepositoryID
	for _, o := range a.Owners {
		out.Owners = append(out.Owners, client.ArtifactHubOwner(o))
	}
	for _, i := range a.Ignore {
		out.Ignore = append(out.Ignore, client.ArtifactHubIgnore(i))
	}
	return out
}
