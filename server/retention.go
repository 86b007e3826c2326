package server

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file holds the retention endpoints of §15.

func toRetention(p *chartctl.RetentionPolicy) client.RetentionPolicy {
	var out client.RetentionPolicy
	if p == nil {
		return out
	}
	dur := func(d *time.Duration) *string {
		if d == nil {
			return nil
		}
		s := app.FormatRetentionDuration(*d)
		return &s
	}
	out.KeepLatest = p.KeepLatest
	out.KeepPushedWithin, out.KeepDownloadedWithin, out.DeletePrereleasesAfter = dur(p.KeepPushedWithin), dur(p.KeepDownloadedWithin), dur(p.DeletePrereleasesAfter)
	out.KeepMatching, out.Schedule = strp(p.KeepMatching), strp(p.Schedule)
	return out
}

func fromRetention(in client.RetentionPolicy) (*chartctl.RetentionPolicy, error) {
	p := &chartctl.RetentionPolicy{KeepLatest: in.KeepLatest}
	for _, f := range []struct {
		param string
		v     *string
		dst   **time.Duration
	}{{"keep_pushed_within", in.KeepPushedWithin, &p.KeepPushedWithin}, {"keep_downloaded_within", in.KeepDownloadedWithin, &p.KeepDownloadedWithin},
		{"delete_prereleases_after", in.DeletePrereleasesAfter, &p.DeletePrereleasesAfter}} {
		if f.v == nil {
			continue
		}
		d, err := app.ParseRetentionDuration(f.param, *f.v)
		if err != nil {
			return nil, err
		}
		*f.dst = &d
	}
	if in.KeepMatching != nil {
		p.KeepMatching = *in.KeepMatching
	}
	if in.Schedule != nil {
		p.Schedule = *in.Schedule
	}
	return p, nil
}

// handleGetRetention returns a repository's retention policy.
func (s *Server) handleGetRetention(c echo.Context) error {
	p, err := s.app.Retention(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toRetention(p))
}

// handlePutRetention replaces a repository's retention policy.
func (s *Server) handlePutRetention(c echo.Context) error {
	var req client.RetentionPolicy
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	pol, err := fromRetention(req)
	if err != nil {
		return err
	}
	if err := s.app.SetRetention(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), pol); err != nil {
		return err
	}
	return httpx.Data(c, toRetention(pol))
}

// handleRunRetention applies the policy now, or with dry_run=true lists
// what it would delete.
func (s *Server) handleRunRetention(c echo.Context) error {
	dry := false
	if v := c.QueryParam("dry_run"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return chartctl.Invalid("dry_run", "dry_run must be true or false.")
		}
		dry = b
	}
	ds, err := s.app.RunRetention(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), dry)
	if err != nil {
		return err
	}
	out := client.RetentionRun{Deleted: []client.RetentionDeletion{}, DryRun: dry}
	for _, d := range ds {
		out.Deleted = append(out.Deleted, client.RetentionDeletion{Name: d.Name, Version: d.Version, Reason: d.Reason})
	}
	return httpx.Data(c, out)
}
