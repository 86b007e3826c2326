package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// handleListCharts lists a repository's chart versions, optionally only one
// chart's or one version.
func (s *Server) handleListCharts(c echo.Context) error {
	r, err := s.readableRepo(c)
	if err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	f := chartctl.ChartFilter{Name: c.QueryParam("name"), Version: c.QueryParam("version")}
	if f.Name != "" {
		if err := chart.ValidateName(f.Name); err != nil {
			return err
		}
	}
	if f.Version != "" {
		if err := chart.ValidateVersion(f.Version); err != nil {
			return err
		}
	}
	return s.listChartPage(c, r, f, pg, nil)
}

// listChartPage answers one page of chart versions; the store decodes only
// that page. When nothing matches and ifNone is set, it answers ifNone.
func (s *Server) listChartPage(c echo.Context, r *chartctl.Repository, f chartctl.ChartFilter, pg httpx.Page, ifNone error) error {
	cvs, total, err := s.Store.ChartVersionPage(c.Request().Context(), r.Name, f, pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	if total == 0 && ifNone != nil {
		return ifNone
	}
	return httpx.List(c, httpx.MapSlice(cvs, toChart), client.Meta{Total: total, Page: pg.Page, Limit: pg.Limit})
}

// handleChartVersions lists the versions of one chart, newest first.
func (s *Server) handleChartVersions(c echo.Context) error {
	r, err := s.readableRepo(c)
	if err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	if err := chart.ValidateName(name); err != nil {
		return app.ChartNotFound(r.Name, name, "")
	}
	return s.listChartPage(c, r, chartctl.ChartFilter{Name: name}, pg, app.ChartNotFound(r.Name, name, ""))
}

// handleGetChartVersion returns one version's metadata.
func (s *Server) handleGetChartVersion(c echo.Context) error {
	cv, err := s.chartVersion(c)
	if err != nil {
		return err
	}
	return httpx.Data(c, toChartDetail(cv))
}

// chartVersion loads the :name/:version of a readable :repo.
func (s *Server) chartVersion(c echo.Context) (*chartctl.ChartVersion, error) {
	r, err := s.readableRepo(c)
	if err != nil {
		return nil, err
	}
	var cv *chartctl.ChartVersion
	if r.Proxy != nil && s.app.Proxies != nil {
		// A proxy fetches a version it has not cached yet, as over Helm.
		cv, err = s.app.Proxies.Fetch(c.Request().Context(), r, c.Param("name"), c.Param("version"))
	} else {
		cv, err = s.app.ChartVersion(c.Request().Context(), r, c.Param("name"), c.Param("version"))
	}
	if err != nil {
		return nil, err
	}
	// A held version only to those who may push (held.go in app).
	if err := s.app.VisibleVersion(c.Request().Context(), httpx.PrincipalOf(c), cv); err != nil {
		return nil, err
	}
	return cv, nil
}

// handleDownloadChart serves a version's archive; its ETag is the digest.
func (s *Server) handleDownloadChart(c echo.Context) error {
	cv, err := s.chartVersion(c)
	if err != nil {
		return err
	}
	if err := s.app.ServableVersion(c.Request().Context(), httpx.PrincipalOf(c), cv); err != nil {
		return err
	}
	if c.Request().Method == http.MethodGet {
		s.app.CountDownload(cv.Repository, cv.Name, cv.Version)
	}
	return httpx.ServeBlob(c, s.app, cv.Digest, chart.ArchiveFileName(cv.Name, cv.Version), "application/gzip")
}

// handleUploadChart stores a chart archive sent as multipart field "chart".
// The upload bucket of §7 is charged only once the caller may write to the
// repository, so nobody spends (or reads) another tenant's budget. The form
// field "created_at" (§14) is for server admins only; an admin's upload
// that sets it (an import) is not charged the upload bucket, so the bucket
// is charged for admins once the form has been read.
func (s *Server) handleUploadChart(c echo.Context) error {
	p := httpx.PrincipalOf(c)
	r, err := s.app.ChartPushRepo(c.Request().Context(), p, c.Param("repo"))
	if err != nil {
		// Refused: charged to the caller's own global bucket only.
		if rerr := s.takeRate(c, p); rerr != nil {
			return rerr
		}
		return err
	}
	admin := app.RequireAdmin(p) == nil
	uploadRate := ratelimit.Request{Bucket: bucketUpload, Key: r.Name}
	if !admin {
		if err := s.takeRate(c, p, uploadRate); err != nil {
			return err
		}
	}
	force, err := parseForce(c.QueryParam("force"))
	if err != nil {
		return err
	}
	dryRun := false
	if v := c.QueryParam("dry_run"); v != "" {
		if dryRun, err = strconv.ParseBool(v); err != nil {
			return chartctl.Invalid("dry_run", "dry_run must be true or false.")
		}
	}
	release, err := s.TakeUpload(c, p)
	if err != nil {
		return err
	}
	defer release()
	u, err := s.app.ReceiveMultipart(c.Response(), c.Request())
	if err != nil {
		return err
	}
	if err := app.CheckCreatedAt(p, u); err != nil {
		return s.app.Reject(u, err)
	}
	if admin {
		// The global bucket always; the upload bucket unless importing.
		var extra []ratelimit.Request
		if u.CreatedAt.IsZero() {
			extra = append(extra, uploadRate)
		}
		if err := s.takeRate(c, p, extra...); err != nil {
			return s.app.Reject(u, err)
		}
	}
	if dryRun {
		// The admission policy alone (CONTRACT §18): 200 with the
		// findings, or its 422; nothing is stored.
		fs, err := s.app.CheckUpload(c.Request().Context(), r, u)
		if err != nil {
			return err
		}
		return httpx.Data(c, client.ChartCheck{Name: u.Chart.Name, Version: u.Chart.Version, DryRun: true, Findings: toFindings(fs)})
	}
	stored, _, err := s.app.PutChart(c.Request().Context(), r, u, app.PutOptions{Force: force, CreatedAt: u.CreatedAt})
	if err != nil {
		return err
	}
	return httpx.Data(c, toUpload(stored))
}

func parseForce(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, chartctl.Invalid("force", "force must be true or false.")
	}
	return b, nil
}

// handleDeleteChartVersion deletes one version.
func (s *Server) handleDeleteChartVersion(c echo.Context) error {
	r, err := s.app.ChartDeleteRepo(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	cv, err := s.app.DeleteChart(c.Request().Context(), r, c.Param("name"), c.Param("version"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toChart(cv))
}
