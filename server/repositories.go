package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleListRepositories lists the repositories the caller can read.
func (s *Server) handleListRepositories(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoRead); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	all, err := s.app.Repositories(c.Request().Context())
	if err != nil {
		return err
	}
	return s.writeRepositoryList(c, all, pg)
}

// handleCreateRepository creates a personal or organization repository.
func (s *Server) handleCreateRepository(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoWrite); err != nil {
		return err
	}
	// A robot's stand-in user is never stored: a repository it created
	// would belong to nobody.
	if err := app.RequireHuman(httpx.PrincipalOf(c), "create repositories"); err != nil {
		return err
	}
	var req client.CreateRepositoryRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if err := chartctl.ValidateName("name", req.Name); err != nil {
		return err
	}
	if len(req.Description) > 1024 {
		return chartctl.Invalid("description", "description must be at most 1024 characters.")
	}
	vis := chartctl.Visibility(req.Visibility)
	if vis == "" {
		vis = chartctl.VisibilityPrivate
	} else if !vis.Valid() {
		return chartctl.Invalid("visibility", "%s", app.VisibilityMessage)
	}
	ctx := c.Request().Context()
	p := httpx.PrincipalOf(c)
	if req.Organization != "" {
		if err := chartctl.ValidateName("organization", req.Organization); err != nil {
			return err
		}
		setAuditOrg(c, req.Organization)
		if _, err := s.loadOrg(ctx, p, req.Organization); err != nil {
			return err
		}
		if !p.OrgRole(req.Organization).AtLeast(chartctl.RoleMaintainer) {
			return chartctl.Errorf(chartctl.EFORBIDDEN, "Creating a repository in organization %q needs the maintainer role.", req.Organization)
		}
	}
	r := &chartctl.Repository{Name: req.Name, Description: strings.TrimSpace(req.Description), Organization: req.Organization,
		OwnerID: p.User.ID, Visibility: vis, IndexFormat: chartctl.IndexFormat(req.IndexFormat), CreatedAt: s.Now()}
	if r.IndexFormat != "" && !r.IndexFormat.Valid() {
		return chartctl.InvalidIndexFormat(r.IndexFormat)
	}
	if req.Mirror != nil && req.Proxy != nil {
		return chartctl.Invalid("proxy", "A repository is a mirror or a proxy, not both: give mirror or proxy.")
	}
	if req.Mirror != nil {
		m, err := s.app.NewMirror(mirrorInput(req.Mirror))
		if err != nil {
			return err
		}
		r.Mirror = m
	}
	if req.Proxy != nil {
		px, err := s.app.NewProxy(proxyInput(req.Proxy))
		if err != nil {
			return err
		}
		r.Proxy = px
	}
	if err := s.app.CreateRepository(ctx, r); err != nil {
		return err
	}
	return httpx.Data(c, s.repositoryView(r))
}

// handleGetRepository returns one repository.
func (s *Server) handleGetRepository(c echo.Context) error {
	r, err := s.readableRepo(c)
	if err != nil {
		return err
	}
	return httpx.Data(c, s.repositoryView(r))
}

// repositoryView is toRepository with a proxy's cache counters and
// upstream health, which this replica's cache keeps.
func (s *Server) repositoryView(r *chartctl.Repository) client.Repository {
	out := toRepository(r)
	if out.Proxy != nil {
		st := s.app.ProxyStats(r)
		out.Proxy.Hits, out.Proxy.Misses, out.Proxy.UpstreamStatus, out.Proxy.UpstreamError = st.Hits, st.Misses, st.UpstreamStatus, st.UpstreamError
		if st.CheckedAt != nil {
			t := st.CheckedAt.UTC()
			out.Proxy.CheckedAt = &t
		}
	}
	return out
}

// handleUpdateRepository changes a repository's description or
// visibility (owner, or maintainer of an organization's repository).
func (s *Server) handleUpdateRepository(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoWrite); err != nil {
		return err
	}
	var req client.UpdateRepositoryRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	ch := app.RepositoryChanges{Description: req.Description, Visibility: req.Visibility, IndexFormat: req.IndexFormat}
	if req.Mirror != nil {
		in := mirrorInput(req.Mirror)
		ch.Mirror = &in
	}
	if req.Proxy != nil {
		in := proxyInput(req.Proxy)
		ch.Proxy = &in
	}
	r, err := s.app.UpdateRepository(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), ch)
	if err != nil {
		return err
	}
	return httpx.Data(c, s.repositoryView(r))
}

func proxyInput(p *client.ProxyRequest) app.ProxyInput {
	return app.ProxyInput{URL: p.URL, Username: p.Username, Password: p.Password, TTL: p.TTL, Retention: p.Retention, Include: p.Include, Exclude: p.Exclude}
}

// handlePurgeCache deletes what a proxy repository cached (repo:write,
// the maintain role): everything, one chart's versions (?chart=) or one
// version (?chart=&version=).
func (s *Server) handlePurgeCache(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoWrite); err != nil {
		return err
	}
	for k := range c.QueryParams() {
		if k != "chart" && k != "version" {
			return chartctl.Invalid(k, "Unknown parameter %q: DELETE /v1/repositories/:repo/cache takes chart and version.", k)
		}
	}
	purged, err := s.app.PurgeProxyCache(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), c.QueryParam("chart"), c.QueryParam("version"))
	if err != nil {
		return err
	}
	out := client.PurgeCacheResult{Purged: make([]client.ChartUpload, 0, len(purged))}
	for _, cv := range purged {
		out.Purged = append(out.Purged, toUpload(cv))
	}
	return httpx.Data(c, out)
}

func mirrorInput(m *client.MirrorRequest) app.MirrorInput {
	return app.MirrorInput{URL: m.URL, Interval: m.Interval, Username: m.Username, Password: m.Password}
}

// handleSyncRepository starts a sync of a mirror repository now
// (maintainer, repo:write): 200 with the repository, its status syncing
// (CONTRACT §1: success is 200; the sync runs on in the background).
func (s *Server) handleSyncRepository(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeRepoWrite); err != nil {
		return err
	}
	r, err := s.app.RequestSync(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(c, http.StatusOK, struct {
		Data client.Repository `json:"data"`
	}{toRepository(r)})
}

// handleDeleteRepository deletes a repository and its charts (owner only).
func (s *Server) handleDeleteRepository(c echo.Context) error {
	r, err := s.writableRepo(c, chartctl.RepoRoleAdmin)
	if err != nil {
		return err
	}
	if err := s.app.DeleteRepository(c.Request().Context(), r); err != nil {
		return err
	}
	return httpx.Data(c, map[string]any{"name": r.Name, "deleted": true})
}
