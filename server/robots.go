package server

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/text"
)

// This file serves robot accounts (CONTRACT §18 "Access"):
// /v1/organizations/:org/robots[/:name[/rotate]]. The application layer
// (internal/app/robots.go) decides who may do what.

// handleListRobots lists an organization's robot accounts (maintainers
// and owners of it, org:read).
func (s *Server) handleListRobots(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Last-used times are batched: write what is pending first so the
	// list shows them.
	s.touch.flush()
	robots, err := s.app.Robots(ctx, httpx.PrincipalOf(c), c.Param("org"))
	if err != nil {
		return err
	}
	return httpx.ListPage(c, robots, pg, func(r *chartctl.Robot) client.Robot { return s.toRobot(ctx, r) })
}

// handleCreateRobot creates a robot account; the answer alone carries its
// secret.
func (s *Server) handleCreateRobot(c echo.Context) error {
	var req client.CreateRobotRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, secret, err := s.app.CreateRobot(ctx, httpx.PrincipalOf(c), c.Param("org"), app.RobotInput{
		Name: req.Name, Description: req.Description, Repositories: req.Repositories, Permissions: req.Permissions, ExpiresAt: req.ExpiresAt})
	if err != nil {
		return err
	}
	out := s.toRobot(ctx, r)
	out.Secret = secret
	return httpx.Data(c, out)
}

// handleGetRobot shows one robot account.
func (s *Server) handleGetRobot(c echo.Context) error {
	ctx := c.Request().Context()
	s.touch.flush()
	r, err := s.app.Robot(ctx, httpx.PrincipalOf(c), c.Param("org"), c.Param("name"))
	if err != nil {
		return err
	}
	return httpx.Data(c, s.toRobot(ctx, r))
}

// handleUpdateRobot changes a robot account: description, repositories,
// permissions, expiry, disabled. Cached credentials are dropped, so a
// disabled robot stops at once.
func (s *Server) handleUpdateRobot(c echo.Context) error {
	var req client.UpdateRobotRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, err := s.app.UpdateRobot(ctx, httpx.PrincipalOf(c), c.Param("org"), c.Param("name"), app.RobotChanges{
		Description: req.Description, Repositories: req.Repositories, Permissions: req.Permissions,
		Disabled: req.Disabled, ExpiresAt: req.ExpiresAt, ClearExpiry: req.NoExpiry})
	if err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, s.toRobot(ctx, r))
}

// handleRotateRobot gives a robot account a new secret; the old one keeps
// working for the grace asked for (none by default).
func (s *Server) handleRotateRobot(c echo.Context) error {
	var req client.RotateRobotRequest
	// The body is optional: a rotation without grace needs none.
	if c.Request().ContentLength != 0 {
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
	}
	var grace time.Duration
	if req.Grace != "" {
		d, err := text.ParseDuration(req.Grace)
		if err != nil {
			return chartctl.Invalid("grace", "grace must be a duration from 0s to 7d, such as 10m or 1h.")
		}
		grace = d
	}
	ctx := c.Request().Context()
	r, secret, err := s.app.RotateRobot(ctx, httpx.PrincipalOf(c), c.Param("org"), c.Param("name"), grace)
	if err != nil {
		return err
	}
	s.creds.invalidate()
	out := s.toRobot(ctx, r)
	out.Secret = secret
	return httpx.Data(c, out)
}

// handleDeleteRobot deletes a robot account with its trusted publishers
// and the credentials exchanged for it.
func (s *Server) handleDeleteRobot(c echo.Context) error {
	ctx := c.Request().Context()
	r, err := s.app.DeleteRobot(ctx, httpx.PrincipalOf(c), c.Param("org"), c.Param("name"))
	if err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, s.toRobot(ctx, r))
}

// toRobot is a robot account as /v1 shows it (never a secret's hash).
func (s *Server) toRobot(ctx context.Context, r *chartctl.Robot) client.Robot {
	out := client.Robot{Name: r.Name, Organization: r.Organization, UserName: r.UserName(), Description: r.Description,
		Repositories: r.Repositories, Permissions: r.Permissions.Strings(), Disabled: r.Disabled,
		ExpiresAt: tsp(r.ExpiresAt), LastUsedAt: tsp(r.LastUsedAt), CreatedBy: s.app.RobotCreator(ctx, r), CreatedAt: ts(r.CreatedAt)}
	if out.Repositories == nil {
		out.Repositories = []string{}
	}
	return out
}
