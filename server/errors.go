package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// handleNoRoute answers a request no route matched: 405 with Allow when the
// path exists for other methods, 404 otherwise.
func (s *Server) handleNoRoute(c echo.Context) error {
	known := map[string]bool{}
	for _, r := range s.echo.Routes() {
		if r.Method != echo.RouteNotFound {
			known[r.Method+" "+r.Path] = true
		}
	}
	path := c.Request().URL.RawPath
	if path == "" {
		path = c.Request().URL.Path
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		ctx := s.echo.NewContext(c.Request(), nil)
		s.echo.Router().Find(m, path, ctx)
		if known[m+" "+ctx.Path()] {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		if s.NotFoundPage != nil && wantsPage(c.Request(), path) {
			return s.NotFoundPage(c)
		}
		return echo.ErrNotFound
	}
	c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
	return echo.ErrMethodNotAllowed
}

// wantsPage reports whether a request for an unknown address comes from a
// browser navigating to a page: a GET or HEAD that accepts HTML, outside
// the API, the registry and the Helm repositories, whose clients read the
// JSON error.
func wantsPage(r *http.Request, path string) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, p := range []string{"/v1/", "/v2/", "/helm/"} {
		if strings.HasPrefix(path, p) || path+"/" == p {
			return false
		}
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
