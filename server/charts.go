package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// handleListCharts lists a repository's chart versions, optionally only one
// chart's or one version.
func (s *Server) handleListCharts(c echo.Context) error {
	r, err := s.readableRepo(c)
	if err != nil {
		return err
	}
	pg, err := parsePage(c)
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
func (s *Server) listChartPage(c echo.Context, r *chartctl.Repository, f chartctl.ChartFilter, pg page, ifNone error) error {
	cvs, total, err := s.Store.ChartVersionPage(c.Request().Context(), r.Name, f, pg.offset(), pg.Limit)
	if err != nil {
		return err
	}
	if total == 0 && ifNone != nil {
		return ifNone
	}
	return list(c, mapSlice(cvs, toChart), client.Meta{Total: total, Page: pg.Page, Limit: pg.Limit})
}

// handleChartVersions lists the versions of one chart, newest first.
func (s *Server) handleChartVersions(c echo.Context) error {
	r, err := s.readableRepo(c)
	if err != nil {
		return err
	}
	pg, err := parsePage(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	if err := chart.ValidateName(name); err != nil {
		return chartNotFound(r.Name, name, "")
	}
	return s.listChartPage(c, r, chartctl.ChartFilter{Name: name}, pg, chartNotFound(r.Name, name, ""))
}

// handleGetChartVersion returns one version's metadata.
func (s *Server) handleGetChartVersion(c echo.Context) error {
	cv, err := s.chartVersion(c)
	if err != nil {
		return err
	}
	return data(c, toChartDetail(cv))
}

// chartVersion loads the :name/:version of a readable :repo.
func (s *Server) chartVersion(c echo.Context) (*chartctl.ChartVersion, error) {
	r, err := s.readableRepo(c)
	if err != nil {
		return nil, err
	}
	return s.lookupVersion(c, r, c.Param("name"), c.Param("version"))
}

func (s *Server) lookupVersion(c echo.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
		return nil, chartNotFound(r.Name, name, version)
	}
	cv, err := s.Store.ChartVersion(c.Request().Context(), r.Name, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, chartNotFound(r.Name, name, version)
	}
	return cv, err
}

func chartNotFound(repo, name, version string) error {
	if version == "" {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q not found in repository %q.", name, repo)
	}
	return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %q version %q not found in repository %q.", name, version, repo)
}

// handleDownloadChart serves a version's archive; its ETag is the digest.
func (s *Server) handleDownloadChart(c echo.Context) error {
	cv, err := s.chartVersion(c)
	if err != nil {
		return err
	}
	return s.serveBlob(c, cv.Digest, chart.ArchiveFileName(cv.Name, cv.Version), "application/gzip")
}

// serveBlob serves a stored blob with ranges and conditional requests.
func (s *Server) serveBlob(c echo.Context, digest, filename, contentType string) error {
	b, err := s.Blobs.Open(c.Request().Context(), digest)
	if err != nil {
		return err
	}
	defer b.Close()
	h := c.Response().Header()
	h.Set("Content-Type", contentType)
	h.Set("ETag", strconv.Quote(digest))
	h.Set("Cache-Control", "private, max-age=0, must-revalidate")
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, b)
	return nil
}

// handleUploadChart stores a chart archive sent as multipart field "chart".
func (s *Server) handleUploadChart(c echo.Context) error {
	r, err := s.writableRepo(c, chartctl.RoleMaintainer)
	if err != nil {
		return err
	}
	force, err := parseForce(c.QueryParam("force"))
	if err != nil {
		return err
	}
	u, err := s.receiveMultipart(c)
	if err != nil {
		s.countUpload(false, err)
		return err
	}
	stored, created, err := s.commit(c.Request().Context(), r, u, force && s.Config.AllowOverwrite)
	s.countUpload(created, err)
	if chartctl.ErrorCode(err) == chartctl.ECONFLICT && force && !s.Config.AllowOverwrite {
		return chartctl.Errorf(chartctl.ECONFLICT, "%s This server does not allow overwriting (start it with --allow-overwrite).", chartctl.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	return data(c, toUpload(stored))
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
	r, err := s.writableRepo(c, chartctl.RoleMaintainer)
	if err != nil {
		return err
	}
	cv, err := s.deleteVersion(c, r, c.Param("name"), c.Param("version"))
	if err != nil {
		return err
	}
	return data(c, toChart(cv))
}

func (s *Server) deleteVersion(c echo.Context, r *chartctl.Repository, name, version string) (*chartctl.ChartVersion, error) {
	if chart.ValidateName(name) != nil || chart.ValidateVersion(version) != nil {
		return nil, chartNotFound(r.Name, name, version)
	}
	ctx := c.Request().Context()
	cv, orphans, err := s.Store.DeleteChartVersion(ctx, r.Name, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, chartNotFound(r.Name, name, version)
	} else if err != nil {
		return nil, err
	}
	s.index.Refresh(context.WithoutCancel(ctx), r.Name, name, version)
	for _, d := range orphans {
		s.deleteIfOrphan(ctx, d)
	}
	return cv, nil
}
