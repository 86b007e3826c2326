package server

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleSearch finds charts whose name, description or keywords contain q
// (case-insensitive) in the repositories the caller can read: the latest
// version of each chart; the exact name first, then names starting with q,
// names containing it, and description or keyword matches.
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
	var repos []*chartctl.Repository
	if name := c.QueryParam("repository"); name != "" {
		r, err := s.app.VisibleRepo(ctx, p, name)
		if err != nil {
			return err
		}
		repos = []*chartctl.Repository{r}
	} else {
		all, err := s.Store.Repositories(ctx)
		if err != nil {
			return err
		}
		for _, r := range all {
			if p.CanSeeRepo(r) {
				repos = append(repos, r)
			}
		}
	}
	needle := strings.ToLower(q)
	// rank orders matches: the exact name, a name starting with q, a name
	// containing q, then description or keyword matches.
	type hit struct {
		res  client.SearchResult
		rank int
	}
	var hits []hit
	for _, r := range repos {
		cvs, err := s.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{Latest: true})
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			// Deleted since it was listed: it has nothing to match.
			continue
		} else if err != nil {
			return err
		}
		for _, cv := range cvs {
			name := strings.ToLower(cv.Name)
			rank := 3
			switch {
			case name == needle:
				rank = 0
			case strings.HasPrefix(name, needle):
				rank = 1
			case strings.Contains(name, needle):
				rank = 2
			case !strings.Contains(strings.ToLower(cv.Description), needle) && !keywordMatch(cv.Keywords, needle):
				continue
			}
			hits = append(hits, hit{rank: rank, res: client.SearchResult{Repository: r.Name, Name: cv.Name, Version: cv.Version,
				AppVersion: cv.AppVersion, Description: cv.Description, Keywords: cv.Keywords, Digest: cv.Digest, CreatedAt: ts(cv.CreatedAt)}})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.res.Name != b.res.Name {
			return a.res.Name < b.res.Name
		}
		return a.res.Repository < b.res.Repository
	})
	return httpx.ListPage(c, hits, pg, func(h hit) client.SearchResult { return h.res })
}

func keywordMatch(kws []string, needle string) bool {
	for _, k := range kws {
		if strings.Contains(strings.ToLower(k), needle) {
			return true
		}
	}
	return false
}
