package server

import (
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleChartDiff compares two versions of a chart, also across
// repositories (to_repo), as JSON or, for Accept: text/plain, as one
// unified diff (CONTRACT §18 "Discovery"). The caller must be able to
// read both repositories (app.DiffCharts).
func (s *Server) handleChartDiff(c echo.Context) error {
	from, to := c.QueryParam("from"), c.QueryParam("to")
	for _, p := range []struct{ name, v string }{{"from", from}, {"to", to}} {
		if p.v == "" {
			return chartctl.Invalid(p.name, "%s is required: the version to compare (diff?from=1.0.0&to=1.1.0).", p.name)
		}
		if chart.ValidateVersion(p.v) != nil {
			return chartctl.Invalid(p.name, "%s must be a chart version (SemVer, such as 1.2.3), not %q.", p.name, p.v)
		}
	}
	d, err := s.app.DiffCharts(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), c.Param("name"), from, to, c.QueryParam("to_repo"))
	if err != nil {
		return err
	}
	if wantsText(c.Request().Header.Get("Accept")) {
		c.Response().Header().Set("Cache-Control", "private, no-cache")
		return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(d.Unified()))
	}
	return httpx.Data(c, toChartDiff(d.Result))
}

// wantsText reports whether an Accept header prefers text/plain to JSON:
// it names text/plain and not application/json before it.
func wantsText(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/plain":
			return true
		case "application/json", "*/*":
			return false
		}
	}
	return false
}

func toChartDiff(r *chartdiff.Result) client.ChartDiff {
	out := client.ChartDiff{Files: make([]client.FileDiff, len(r.Files)), ValuesError: r.ValuesError, RenderedError: r.RenderedError,
		Values: client.ValuesDiff{Added: r.Values.Added, Removed: r.Values.Removed, Changed: make([]client.ValueChange, len(r.Values.Changed))}}
	for i, f := range r.Files {
		out.Files[i] = client.FileDiff{Path: f.Path, Status: f.Status, Diff: f.Diff}
	}
	for i, ch := range r.Values.Changed {
		out.Values.Changed[i] = client.ValueChange{Key: ch.Key, From: ch.From, To: ch.To}
	}
	// Empty lists, never null: a client iterates them as they are.
	if out.Values.Added == nil {
		out.Values.Added = []string{}
	}
	if out.Values.Removed == nil {
		out.Values.Removed = []string{}
	}
	return out
}
