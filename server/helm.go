package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// This file serves every repository as a plain Helm repository (§8) and
// answers ChartMuseum's API under /helm/api so `helm cm-push` works
// unchanged. Public repositories need no credential; private ones take
// HTTP Basic (any user name, the API key or access token as password) or
// Bearer.

// helmPrincipal resolves optional credentials: nil when none were sent.
func (s *Server) helmPrincipal(c echo.Context) (*chartctl.Principal, error) {
	h := c.Request().Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	var tok, malformed string
	scheme, rest, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Basic"):
		if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err != nil {
			malformed = "Malformed Basic credentials."
		} else {
			_, tok, _ = strings.Cut(string(raw), ":")
		}
	case strings.EqualFold(scheme, "Bearer"):
		tok = strings.TrimSpace(rest)
	default:
		malformed = "Unsupported Authorization scheme: use Basic or Bearer."
	}
	return s.resolveCredential(c, tok, malformed, `Basic realm="chartctl"`)
}

func (s *Server) helmUnauthorized(c echo.Context, msg string) error {
	c.Response().Header().Set("WWW-Authenticate", `Basic realm="chartctl"`)
	return chartctl.Errorf(chartctl.EUNAUTHORIZED, "%s", msg)
}

// helmRepo loads the :repo repository for reading through the Helm
// protocol: public ones for anyone, private ones with a credential that
// may read it. Without a credential a private or unknown repository is 401
// (so Helm prompts for credentials and existence is not revealed).
func (s *Server) helmRepo(c echo.Context) (*chartctl.Repository, *chartctl.Principal, error) {
	p, err := s.helmPrincipal(c)
	if err != nil {
		return nil, nil, err
	}
	name := c.Param("repo")
	if chartctl.ValidateName("repo", name) != nil {
		return nil, nil, repoNotFound(name)
	}
	r, err := s.Store.Repository(c.Request().Context(), name)
	if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return nil, nil, err
	}
	if r != nil && r.Visibility == chartctl.VisibilityPublic {
		return r, p, nil
	}
	if p == nil {
		return nil, nil, s.helmUnauthorized(c, "Authentication required: use your API key as the password.")
	}
	if !p.Scopes.Allows(chartctl.ScopeRepoRead) {
		return nil, nil, chartctl.Errorf(chartctl.EFORBIDDEN, "This credential lacks the repo:read scope.")
	}
	if r == nil || !p.CanSeeRepo(r) {
		return nil, nil, repoNotFound(name)
	}
	return r, p, nil
}

// handleHelmIndex serves index.yaml from pre-rendered bytes, with a strong
// ETag and gzip when the client accepts it.
func (s *Server) handleHelmIndex(c echo.Context) error {
	r, _, err := s.helmRepo(c)
	if err != nil {
		return err
	}
	idx, err := s.index.Get(c.Request().Context(), r.Name)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("ETag", idx.ETag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "no-cache")
	if etagMatch(c.Request().Header.Get("If-None-Match"), idx.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	body := idx.Body
	if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		body = idx.Gzip()
		h.Set("Content-Encoding", "gzip")
	}
	// A known length spares both sides chunked encoding of a large body.
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if c.Request().Method == http.MethodHead {
		h.Set("Content-Type", "application/x-yaml")
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, "application/x-yaml", body)
}

func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t == etag || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip: a
// gzip (or x-gzip) coding whose quality value is not zero (RFC 9110
// §12.5.3; "q=0", "q=0.0" and "Q=0.000" all refuse it).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		enc = strings.TrimSpace(enc)
		if !strings.EqualFold(enc, "gzip") && !strings.EqualFold(enc, "x-gzip") {
			continue
		}
		return qualityNonZero(params)
	}
	return false
}

// qualityNonZero reports whether the parameters of an Accept-Encoding
// element leave its weight above zero. A malformed weight counts as zero.
func qualityNonZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err == nil && q > 0
	}
	return true
}

// handleHelmDownload serves charts/NAME-VERSION.tgz and its .tgz.prov.
func (s *Server) handleHelmDownload(c echo.Context) error {
	r, _, err := s.helmRepo(c)
	if err != nil {
		return err
	}
	file := c.Param("file")
	prov := strings.HasSuffix(file, ".prov")
	// "app-2-1.0.0.tgz" reads as app 2-1.0.0 or app-2 1.0.0: serve the
	// first reading that exists.
	var cv *chartctl.ChartVersion
	for _, nv := range chart.ArchiveFileCandidates(strings.TrimSuffix(file, ".prov")) {
		found, err := s.Store.ChartVersion(c.Request().Context(), r.Name, nv.Name, nv.Version)
		if err == nil {
			cv = found
			break
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
	}
	if cv == nil {
		return chartctl.Errorf(chartctl.ENOTFOUND, "No chart archive %q in repository %q.", file, r.Name)
	}
	name, version := cv.Name, cv.Version
	if prov {
		if cv.ProvDigest == "" {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s %s has no provenance file.", name, version)
		}
		return s.serveBlob(c, cv.ProvDigest, file, "application/pgp-signature")
	}
	return s.serveBlob(c, cv.Digest, file, "application/gzip")
}

// cmFail answers an error as the ChartMuseum API does: {"error": "message"}.
func (s *Server) cmFail(c echo.Context, err error) error {
	code, msg := s.describeError(c, err)
	return c.JSON(client.HTTPStatus(code), map[string]string{"error": msg})
}

// cmWritableRepo loads :repo for a ChartMuseum write: a credential with
// repo:write and the maintainer role. The write counts against the same
// rate limits as its /v1 equivalent: global, and upload for uploads.
func (s *Server) cmWritableRepo(c echo.Context, upload bool) (*chartctl.Repository, error) {
	r, p, err := s.helmRepo(c)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, s.helmUnauthorized(c, "Authentication required: use your API key as the password or access token.")
	}
	if !p.Scopes.Allows(chartctl.ScopeRepoWrite) {
		return nil, chartctl.Errorf(chartctl.EFORBIDDEN, "This credential lacks the repo:write scope.")
	}
	if !p.CanSeeRepo(r) {
		return nil, repoNotFound(r.Name)
	}
	if !p.RepoRole(r).AtLeast(chartctl.RoleMaintainer) {
		return nil, forbiddenRole(chartctl.RoleMaintainer, r)
	}
	var extra []ratelimit.Request
	if upload {
		extra = append(extra, ratelimit.Request{Bucket: bucketUpload, Key: r.Name})
	}
	if err := s.takeRate(c, p, extra...); err != nil {
		return nil, err
	}
	return r, nil
}

// handleCMUpload is ChartMuseum's POST /api/:repo/charts: multipart fields
// chart and prov, or the archive as the raw body; ?force overwrites when the
// server allows it. 201 {"saved":true}; 409 when the version exists.
func (s *Server) handleCMUpload(c echo.Context) error {
	r, err := s.cmWritableRepo(c, true)
	if err != nil {
		return s.cmFail(c, err)
	}
	_, force := c.QueryParams()["force"]
	if v := c.QueryParam("force"); v != "" {
		if force, err = parseForce(v); err != nil {
			return s.cmFail(c, err)
		}
	}
	var u *upload
	if strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), "multipart/") {
		u, err = s.receiveMultipart(c)
	} else {
		u, err = s.receiveRaw(c)
	}
	if err != nil {
		s.countUpload(false, err)
		return s.cmFail(c, err)
	}
	overwrite := force && s.Config.AllowOverwrite
	ctx := c.Request().Context()
	if !overwrite {
		// ChartMuseum refuses any existing version, even identical bytes.
		if _, err := s.Store.ChartVersion(ctx, r.Name, u.chart.Name, u.chart.Version); err == nil {
			u.abort()
			err := chartctl.Errorf(chartctl.ECONFLICT, "%s already exists", chart.ArchiveFileName(u.chart.Name, u.chart.Version))
			s.countUpload(false, err)
			return s.cmFail(c, err)
		}
	}
	_, created, err := s.commit(ctx, r, u, overwrite)
	if err == nil && !created && !overwrite {
		// Stored by a concurrent push since the check above.
		err = chartctl.Errorf(chartctl.ECONFLICT, "%s already exists", chart.ArchiveFileName(u.chart.Name, u.chart.Version))
	}
	s.countUpload(created, err)
	if err != nil {
		return s.cmFail(c, err)
	}
	return c.JSON(http.StatusCreated, map[string]bool{"saved": true})
}

// cmReadableRepo loads :repo for a ChartMuseum read.
func (s *Server) cmReadableRepo(c echo.Context) (*chartctl.Repository, error) {
	r, _, err := s.helmRepo(c)
	return r, err
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
func (s *Server) handleCMList(c echo.Context) error {
	r, err := s.cmReadableRepo(c)
	if err != nil {
		return s.cmFail(c, err)
	}
	cvs, err := s.Store.ChartVersions(c.Request().Context(), r.Name, chartctl.ChartFilter{})
	if err != nil {
		return s.cmFail(c, err)
	}
	out := map[string][]map[string]any{}
	for _, cv := range cvs {
		out[cv.Name] = append(out[cv.Name], cmVersion(cv))
	}
	return c.JSON(http.StatusOK, out)
}

// handleCMVersions is ChartMuseum's GET /api/:repo/charts/:name.
func (s *Server) handleCMVersions(c echo.Context) error {
	r, err := s.cmReadableRepo(c)
	if err != nil {
		return s.cmFail(c, err)
	}
	name := c.Param("name")
	var cvs []*chartctl.ChartVersion
	if chart.ValidateName(name) == nil {
		cvs, err = s.Store.ChartVersions(c.Request().Context(), r.Name, chartctl.ChartFilter{Name: name})
		if err != nil {
			return s.cmFail(c, err)
		}
	}
	if len(cvs) == 0 {
		return s.cmFail(c, chartctl.Errorf(chartctl.ENOTFOUND, "chart not found"))
	}
	return c.JSON(http.StatusOK, mapSlice(cvs, cmVersion))
}

// handleCMVersion is ChartMuseum's GET /api/:repo/charts/:name/:version.
func (s *Server) handleCMVersion(c echo.Context) error {
	r, err := s.cmReadableRepo(c)
	if err != nil {
		return s.cmFail(c, err)
	}
	cv, err := s.lookupVersion(c, r, c.Param("name"), c.Param("version"))
	if err != nil {
		return s.cmFail(c, err)
	}
	return c.JSON(http.StatusOK, cmVersion(cv))
}

// handleCMDelete is ChartMuseum's DELETE /api/:repo/charts/:name/:version.
func (s *Server) handleCMDelete(c echo.Context) error {
	r, err := s.cmWritableRepo(c, false)
	if err != nil {
		return s.cmFail(c, err)
	}
	if _, err := s.deleteVersion(c, r, c.Param("name"), c.Param("version")); err != nil {
		return s.cmFail(c, err)
	}
	return c.JSON(http.StatusOK, map[string]bool{"deleted": true})
}
