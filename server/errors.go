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
		return echo.ErrNotFound
	}
	c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
	return echo.ErrMethodNotAllowed
}
