package helmrepo

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// This file answers ChartMuseum's API, the requests `helm cm-push` sends.

// cmFail answers an error as the ChartMuseum API does: {"error": "message"};
// an admission policy's refusal also lists its "violations" (CONTRACT
// §18), its message naming every rule for clients that show only it.
func (h *Handler) cmFail(c echo.Context, err error) error {
	code, msg := httpx.Describe(c, h.Logger, err)
	if vs := httpx.Violations(err); vs != nil {
		return c.JSON(client.HTTPStatus(code), map[string]any{"error": msg, "violations": vs})
	}
	return c.JSON(client.HTTPStatus(code), map[string]string{"error": msg})
}

// cmWritableRepo loads :repo for a ChartMuseum write: a credential with
// repo:write and the maintainer role, in a repository that is not a
// mirror. Only then is the write charged to
// the same rate limits as its /v1 equivalent: global, and upload for
// uploads.
//
// The write rules alone decide (ChartPushRepo for uploads, ChartDeleteRepo
// for deletes: repo:write, then the repository's visibility, then the
// role and a robot's permission), as on /v1: reading the
// repository first named repo:read to a credential that had neither.
func (h *Handler) cmWritableRepo(c echo.Context, upload bool) (*chartctl.Repository, error) {
	p, err := h.Auth.OptionalPrincipal(c, basicChallenge)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, unauthorized(c, "Authentication required: use your API key as the password or access token.")
	}
	// The upload's concurrency cap is kept per credential.
	httpx.SetPrincipal(c, p)
	writable := h.App.ChartDeleteRepo
	if upload {
		writable = h.App.ChartPushRepo
	}
	r, err := writable(c.Request().Context(), p, c.Param("repo"))
	if err != nil {
		return nil, err
	}
	var extra []ratelimit.Request
	if upload {
		extra = append(extra, ratelimit.Request{Bucket: h.UploadBucket, Key: r.Name})
	}
	if err := h.Limits.TakeRate(c, p, extra...); err != nil {
		return nil, err
	}
	return r, nil
}

func parseForce(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, chartctl.Invalid("force", "force must be true or false.")
	}
	return b, nil
}

// handleCMUpload is ChartMuseum's POST /api/:repo/charts: multipart fields
// chart and prov, or the archive as the raw body; ?force overwrites when the
// server allows it. 201 {"saved":true}; 409 when the version exists.
func (h *Handler) handleCMUpload(c echo.Context) error {
	r, err := h.cmWritableRepo(c, true)
	if err != nil {
		return h.cmFail(c, err)
	}
	_, force := c.QueryParams()["force"]
	if v := c.QueryParam("force"); v != "" {
		if force, err = parseForce(v); err != nil {
			return h.cmFail(c, err)
		}
	}
	if h.Uploads != nil {
		release, err := h.Uploads.TakeUpload(c, httpx.PrincipalOf(c))
		if err != nil {
			return h.cmFail(c, err)
		}
		defer release()
	}
	var u *app.Upload
	if strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), "multipart/") {
		u, err = h.App.ReceiveMultipart(c.Response(), c.Request())
	} else {
		u, err = h.App.ReceiveRaw(c.Response(), c.Request())
	}
	if err != nil {
		return h.cmFail(c, err)
	}
	overwrite := force && h.App.Config.AllowOverwrite
	ctx := c.Request().Context()
	exists := func() error {
		return chartctl.Errorf(chartctl.ECONFLICT, "%s already exists", chart.ArchiveFileName(u.Chart.Name, u.Chart.Version))
	}
	if !overwrite {
		// ChartMuseum refuses any existing version, even identical bytes.
		// A held version signed later: its provenance file attaches to
		// it (PutChart), the way a signature releases it.
		if cv, err := h.App.Store.ChartVersion(ctx, r.Name, u.Chart.Name, u.Chart.Version); err == nil && !(cv.Held() && u.HasProvenance()) {
			return h.cmFail(c, h.App.Reject(u, exists()))
		}
	}
	_, created, err := h.App.PutChart(ctx, r, u, app.PutOptions{Force: overwrite})
	if err == nil && !created && !overwrite {
		// Stored by a concurrent push since the check above.
		err = exists()
	}
	if err != nil {
		return h.cmFail(c, err)
	}
	return c.JSON(http.StatusCreated, map[string]bool{"saved": true})
}

// cmVersion renders a version as ChartMuseum does: Helm's index entry.
func cmVersion(cv *chartctl.ChartVersion) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(cv.Metadata, &m)
	m["urls"] = []string{"charts/" + chart.ArchiveFileName(cv.Name, cv.Version)}
	m["created"] = cv.CreatedAt.UTC()
	m["digest"] = strings.TrimPrefix(cv.Digest, "sha256:")
	return m
}

// handleCMList is ChartMuseum's GET /api/:repo/charts: every chart's
// versions by name.
func (h *Handler) handleCMList(c echo.Context) error {
	r, _, err := h.repo(c)
	if err != nil {
		return h.cmFail(c, err)
	}
	cvs, err := h.App.Store.ChartVersions(c.Request().Context(), r.Name, chartctl.ChartFilter{})
	if err != nil {
		return h.cmFail(c, err)
	}
	out := map[string][]map[string]any{}
	for _, cv := range cvs {
		out[cv.Name] = append(out[cv.Name], cmVersion(cv))
	}
	return c.JSON(http.StatusOK, out)
}

// handleCMVersions is ChartMuseum's GET /api/:repo/charts/:name.
func (h *Handler) handleCMVersions(c echo.Context) error {
	r, _, err := h.repo(c)
	if err != nil {
		return h.cmFail(c, err)
	}
	name := c.Param("name")
	var cvs []*chartctl.ChartVersion
	if chart.ValidateName(name) == nil {
		cvs, err = h.App.Store.ChartVersions(c.Request().Context(), r.Name, chartctl.ChartFilter{Name: name})
		if err != nil {
			return h.cmFail(c, err)
		}
	}
	if len(cvs) == 0 {
		return h.cmFail(c, chartctl.Errorf(chartctl.ENOTFOUND, "chart not found"))
	}
	return c.JSON(http.StatusOK, httpx.MapSlice(cvs, cmVersion))
}

// handleCMVersion is ChartMuseum's GET /api/:repo/charts/:name/:version.
func (h *Handler) handleCMVersion(c echo.Context) error {
	r, _, err := h.repo(c)
	if err != nil {
		return h.cmFail(c, err)
	}
	cv, err := h.App.ChartVersion(c.Request().Context(), r, c.Param("name"), c.Param("version"))
	if err == nil {
		err = h.App.VisibleVersion(c.Request().Context(), httpx.PrincipalOf(c), cv)
	}
	if err != nil {
		return h.cmFail(c, err)
	}
	return c.JSON(http.StatusOK, cmVersion(cv))
}

// handleCMDelete is ChartMuseum's DELETE /api/:repo/charts/:name/:version.
func (h *Handler) handleCMDelete(c echo.Context) error {
	r, err := h.cmWritableRepo(c, false)
	if err != nil {
		return h.cmFail(c, err)
	}
	if _, err := h.App.DeleteChart(c.Request().Context(), r, c.Param("name"), c.Param("version")); err != nil {
		return h.cmFail(c, err)
	}
	return c.JSON(http.StatusOK, map[string]bool{"deleted": true})
}
