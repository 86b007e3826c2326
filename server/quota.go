package server

import (
	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file holds the quota endpoints of §15.

func toQuota(q chartctl.Quota, u chartctl.Usage) client.Quota {
	return client.Quota{MaxBytes: q.MaxBytes, MaxVersions: q.MaxVersions, UsedBytes: u.Bytes, UsedVersions: u.Versions}
}

type quotaBody struct {
	MaxBytes    *int64 `json:"max_bytes"`
	MaxVersions *int64 `json:"max_versions"`
}

// handleGetRepoQuota returns a repository's quota and usage.
func (s *Server) handleGetRepoQuota(c echo.Context) error {
	q, u, err := s.app.RepoQuota(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toQuota(q, u))
}

// handlePutRepoQuota replaces a repository's quota.
func (s *Server) handlePutRepoQuota(c echo.Context) error {
	var req quotaBody
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	ctx, p := c.Request().Context(), httpx.PrincipalOf(c)
	if err := s.app.SetRepoQuota(ctx, p, c.Param("repo"), chartctl.Quota{MaxBytes: req.MaxBytes, MaxVersions: req.MaxVersions}); err != nil {
		return err
	}
	return s.handleGetRepoQuota(c)
}

// handleGetOrgQuota returns an organization's quota and usage.
func (s *Server) handleGetOrgQuota(c echo.Context) error {
	q, u, err := s.app.OrgQuota(c.Request().Context(), httpx.PrincipalOf(c), c.Param("org"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toQuota(q, u))
}

// handlePutOrgQuota replaces an organization's quota (server admins).
func (s *Server) handlePutOrgQuota(c echo.Context) error {
	var req quotaBody
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if err := s.app.SetOrgQuota(c.Request().Context(), httpx.PrincipalOf(c), c.Param("org"), chartctl.Quota{MaxBytes: req.MaxBytes, MaxVersions: req.MaxVersions}); err != nil {
		return err
	}
	return s.handleGetOrgQuota(c)
}
