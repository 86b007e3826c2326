package server

import (
	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

func toSCIMToken(t *chartctl.SCIMToken) client.SCIMToken {
	return client.SCIMToken{ID: t.ID, Name: t.Name, CreatedAt: ts(t.CreatedAt), LastUsedAt: tsp(t.LastUsedAt)}
}

// handleCreateSCIMToken makes a SCIM bearer token; its value is in this
// answer only.
func (s *Server) handleCreateSCIMToken(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	var req client.CreateSCIMTokenRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	value, t, err := s.app.CreateSCIMToken(c.Request().Context(), req.Name, httpx.PrincipalOf(c).User.ID)
	if err != nil {
		return err
	}
	out := toSCIMToken(t)
	out.Token = value
	return httpx.Data(c, out)
}

// handleListSCIMTokens lists the SCIM tokens (never their values).
func (s *Server) handleListSCIMTokens(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ts, err := s.Store.SCIMTokens(c.Request().Context())
	if err != nil {
		return err
	}
	return httpx.ListPage(c, ts, pg, toSCIMToken)
}

// handleRevokeSCIMToken deletes a SCIM token: the next SCIM request with
// it is refused.
func (s *Server) handleRevokeSCIMToken(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	id := c.Param("id")
	if err := s.app.RevokeSCIMToken(c.Request().Context(), id); err != nil {
		return err
	}
	return httpx.Data(c, map[string]any{"id": id, "revoked": true})
}
