package server

import (
	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartsearch"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleSearch finds charts by text (q, in name, description or keywords)
// and filters (image, organization, category, license, keyword,
// deprecated, signed, kube_version, repository) in the repositories the caller
// can read (chartsearch.Search, which the web pages' search shares), and
// counts the hits by facet.
func (s *Server) handleSearch(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoRead); err != nil {
		return err
	}
	q, err := chartsearch.ParseQuery(c.QueryParam)
	if err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := httpx.PrincipalOf(c)
	if name := c.QueryParam("repository"); name != "" {
		if q.Repo, err = s.app.VisibleRepo(ctx, p, name); err != nil {
			return err
		}
	}
	hits, err := chartsearch.Search(ctx, s.Store, s.app.SearchCandidates, p, q)
	if err != nil {
		return err
	}
	items, meta := httpx.Paginate(hits, pg)
	f := chartsearch.Count(hits)
	return httpx.WriteJSON(c, 200, struct {
		Data   []client.SearchResult `json:"data"`
		Meta   client.Meta           `json:"meta"`
		Facets client.SearchFacets   `json:"facets"`
	}{httpx.MapSlice(items, toSearchResult), meta, client.SearchFacets{Repository: f.Repository, Organization: f.Organization,
		Category: f.Category, License: f.License, Deprecated: f.Deprecated, Signed: f.Signed}})
}

func toSearchResult(h chartsearch.Hit) client.SearchResult {
	cv := h.Version
	return client.SearchResult{Repository: h.Repository, Name: cv.Name, Version: cv.Version,
		AppVersion: cv.AppVersion, Description: cv.Description, Keywords: cv.Keywords, Digest: cv.Digest, CreatedAt: ts(cv.CreatedAt),
		Images: emptyIfNil(h.Meta.Images.Images), Deprecated: h.Meta.Deprecated, Category: h.Meta.Category, License: h.Meta.License, Signed: h.Meta.Signed}
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
