package httpx

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"syscall"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// ErrorHandler returns echo's error handler: every error leaves in the
// contract's envelope with the status from the one code table
// (client.HTTPStatus); internal errors are logged to logger.
func ErrorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) { WriteError(c, logger, err) }
}

// WriteError answers err in the contract's envelope (§2).
func WriteError(c echo.Context, logger *slog.Logger, err error) {
	if c.Response().Committed {
		return
	}
	code, msg := Describe(c, logger, err)
	param := chartctl.ErrorParameter(err)
	h := c.Response().Header()
	if code == chartctl.EUNAUTHORIZED && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", `Bearer realm="chartctl"`)
	}
	if sc := chartctl.ErrorMissingScope(err); sc != "" && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="chartctl", error="insufficient_scope", scope="%s"`, sc))
	}
	body := client.ErrorBody{Error: client.ErrorDetail{Code: code, Message: msg, Parameter: param}}
	if code == chartctl.ERATELIMIT {
		if ra, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
			body.Error.RetryAfter = ra
		}
	}
	body.Error.Violations = Violations(err)
	status := client.HTTPStatus(code)
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = WriteJSON(c, status, body)
}

// Violations returns the wire form of the rules an admission policy
// refused for, nil when err is no *chartctl.PolicyViolation.
func Violations(err error) []client.Violation {
	var pv *chartctl.PolicyViolation
	if !errors.As(err, &pv) {
		return nil
	}
	out := make([]client.Violation, len(pv.Violations))
	for i, v := range pv.Violations {
		out[i] = client.Violation{Rule: v.Rule, Message: v.Message}
	}
	return out
}

// Describe returns the contract's code and the message a person may read
// for err; an internal error is logged with the request id, which the
// message quotes instead of the error's own text.
func Describe(c echo.Context, logger *slog.Logger, err error) (code, msg string) {
	if slow := TooSlow(c); slow != nil {
		// The body was cut for its rate: whatever the handler made of
		// the failed read, that is the cause.
		err = slow
	}
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
		if m := StorageFault(err); m != "" {
			// Not a bug: the operator must act, and the client may retry
			// later. The log keeps the error for the operator.
			logger.Error("storage fault", "request_id", rid, "method", c.Request().Method, "path", c.Path(), "err", err)
			return chartctl.EUNAVAILABLE, m
		}
		logger.Error("internal error", "request_id", rid, "method", c.Request().Method, "path", c.Path(), "err", err)
		msg = "Internal error; quote request id " + rid + " when reporting it."
	}
	return code, msg
}

// StorageFault says what a person may read about a failed write for a
// condition of the server's storage rather than a bug (a full disk, a
// quota of the file system, a read-only mount), or "" for anything else.
// Such a failure is answered 503 (the client may retry once an operator
// has acted), not as an internal error.
func StorageFault(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "The server's storage is full; retry once an operator has freed space."
	case errors.Is(err, syscall.EROFS):
		return "The server's storage is read-only; retry once an operator has made it writable."
	}
	return ""
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
