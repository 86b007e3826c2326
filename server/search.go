package server

import (
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartsearch"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleSearch finds charts whose name, description or keywords contain q
// in the repositories the caller can read (chartsearch.Search, which the
// web pages' search shares).
func (s *Server) handleSearch(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoRead); err != nil {
		return err
	}
	q := strings.TrimSpace(c.QueryParam("q"))
	if q == "" || utf8.RuneCountInString(q) > 256 {
		return chartctl.Invalid("q", "q is required: 1 to 256 characters to search for.")
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := httpx.PrincipalOf(c)
	var repo *chartctl.Repository
	if name := c.QueryParam("repository"); name != "" {
		if repo, err = s.app.VisibleRepo(ctx, p, name); err != nil {
			return err
		}
	}
	hits, err := chartsearch.Search(ctx, s.Store, p, q, repo)
	if err != nil {
		return err
	}
	return httpx.ListPage(c, hits, pg, func(h chartsearch.Hit) client.SearchResult {
		cv := h.Version
		return client.SearchResult{Repository: h.Repository, Name: cv.Name, Version: cv.Version,
			AppVersion: cv.AppVersion, Description: cv.Description, Keywords: cv.Keywords, Digest: cv.Digest, CreatedAt: ts(cv.CreatedAt)}
	})
}
