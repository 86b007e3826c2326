package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// handleError is echo's error handler: every error leaves in the contract's
// envelope with the status from the one code table (client.HTTPStatus).
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := s.describeError(c, err)
	param := chartctl.ErrorParameter(err)
	if code == chartctl.EUNAUTHORIZED && c.Response().Header().Get("WWW-Authenticate") == "" {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="chartctl"`)
	}
	body := client.ErrorBody{Error: client.ErrorDetail{Code: code, Message: msg, Parameter: param}}
	if code == chartctl.ERATELIMIT {
		if ra, err := strconv.Atoi(c.Response().Header().Get("Retry-After")); err == nil {
			body.Error.RetryAfter = ra
		}
	}
	status := client.HTTPStatus(code)
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = writeJSON(c, status, body)
}

// describeError returns the contract's code and the message a person may
// read for err; an internal error is logged with the request id, which the
// message quotes instead of the error's own text.
func (s *Server) describeError(c echo.Context, err error) (code, msg string) {
	code, msg = chartctl.ErrorCode(err), chartctl.ErrorMessage(err)
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code, msg = echoErrorCode(he)
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		code, msg = chartctl.ETOOLARGE, "Request body too large."
	}
	if code == chartctl.EINTERNAL {
		rid := c.Response().Header().Get(echo.HeaderXRequestID)
		s.Logger.Error("internal error", "request_id", rid, "method", c.Request().Method, "path", c.Path(), "err", err)
		msg = "Internal error; quote request id " + rid + " when reporting it."
	}
	return code, msg
}

func echoErrorCode(he *echo.HTTPError) (code, msg string) {
	switch he.Code {
	case http.StatusNotFound:
		return chartctl.ENOTFOUND, "Not found."
	case http.StatusMethodNotAllowed:
		return chartctl.EMETHOD, "Method not allowed."
	case http.StatusRequestEntityTooLarge:
		return chartctl.ETOOLARGE, "Request body too large."
	case http.StatusUnsupportedMediaType:
		return chartctl.EMEDIATYPE, "Unsupported media type."
	case http.StatusUnauthorized:
		return chartctl.EUNAUTHORIZED, "Authentication required."
	case http.StatusBadRequest:
		return chartctl.EINVALID, "Bad request."
	case http.StatusServiceUnavailable:
		return chartctl.EUNAVAILABLE, "Service unavailable."
	}
	return chartctl.EINTERNAL, ""
}

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
