package web

import (
	"errors"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"
)

// MaxFormBody is the largest form body the sign-in, sign-out, consent,
// token and dashboard forms accept. Their real bodies are a few hundred
// bytes; the largest, the consent form, carries the authorization request's
// parameters.
const MaxFormBody = 8 << 10

// LimitForm guards a form-posting route before anything reads its body:
// only application/x-www-form-urlencoded is accepted (multipart is refused
// with 415), a declared length over MaxFormBody is refused with 413
// without reading a byte, and an undeclared (chunked) body is read through
// a limit of MaxFormBody and parsed here, so the handler's form access
// never reads more. Refusals close the connection, so the server does not
// drain the rest of the body either.
func LimitForm(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		refuse := func(status int, msg string) error {
			c.Response().Header().Set("Connection", "close")
			req.Close = true
			return c.String(status, msg)
		}
		if ct := req.Header.Get("Content-Type"); ct != "" || req.ContentLength != 0 {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || mt != "application/x-www-form-urlencoded" {
				return refuse(http.StatusUnsupportedMediaType, "This form accepts only application/x-www-form-urlencoded bodies.\n")
			}
		}
		if req.ContentLength > MaxFormBody {
			return refuse(http.StatusRequestEntityTooLarge, "The form is too large.\n")
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, MaxFormBody)
		if err := req.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return refuse(http.StatusRequestEntityTooLarge, "The form is too large.\n")
			}
			return refuse(http.StatusBadRequest, "The form could not be read.\n")
		}
		return next(c)
	}
}
