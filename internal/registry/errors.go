package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// The error codes of the OCI Distribution Specification.
const (
	CodeBlobUnknown         = "BLOB_UNKNOWN"
	CodeBlobUploadInvalid   = "BLOB_UPLOAD_INVALID"
	CodeBlobUploadUnknown   = "BLOB_UPLOAD_UNKNOWN"
	CodeDigestInvalid       = "DIGEST_INVALID"
	CodeManifestBlobUnknown = "MANIFEST_BLOB_UNKNOWN"
	CodeManifestInvalid     = "MANIFEST_INVALID"
	CodeManifestUnknown     = "MANIFEST_UNKNOWN"
	CodeNameInvalid         = "NAME_INVALID"
	CodeNameUnknown         = "NAME_UNKNOWN"
	CodeSizeInvalid         = "SIZE_INVALID"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeDenied              = "DENIED"
	CodeUnsupported         = "UNSUPPORTED"
	CodeTooManyRequests     = "TOOMANYREQUESTS"
	// CodeUnknown (500) and CodeUnavailable (503) are distribution's codes
	// for failures the specification's table has none for.
	CodeUnknown     = "UNKNOWN"
	CodeUnavailable = "UNAVAILABLE"
)

// Error is an error answered in the OCI error body
// {"errors":[{"code","message","detail"}]}.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is one of the Code* constants.
	Code string
	// Message is written for a person.
	Message string
	// Detail is optional structured detail.
	Detail any
	// RetryAfter, on TOOMANYREQUESTS, is the Retry-After value in seconds.
	RetryAfter int
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

func (e *Error) withStatus(status int) *Error { e.Status = status; return e }

func newError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func errBlobUnknown(digest string) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeBlobUnknown, Message: "Blob unknown to registry.", Detail: map[string]string{"digest": digest}}
}

// errManifestBlobUnknown answers a manifest that refers to a blob (kind
// "blob") or manifest (kind "manifest") the name does not hold.
func errManifestBlobUnknown(kind, digest string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeManifestBlobUnknown,
		Message: "The manifest refers to a " + kind + " this repository does not hold; push it first.",
		Detail:  map[string]string{"digest": digest}}
}

func errManifestUnknown(ref string) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeManifestUnknown, Message: "Manifest unknown to registry.", Detail: map[string]string{"reference": ref}}
}

func errUploadUnknown() *Error {
	return newError(http.StatusNotFound, CodeBlobUploadUnknown, "Upload session unknown to registry, or expired.")
}

func errNameUnknown(name string) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeNameUnknown, Message: "Repository name not known to registry.", Detail: map[string]string{"name": name}}
}

func errDigestInvalid(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeDigestInvalid, format, args...)
}

func errManifestInvalid(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeManifestInvalid, format, args...)
}

func errDenied(format string, args ...any) *Error {
	return newError(http.StatusForbidden, CodeDenied, format, args...)
}

func errUnsupported(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeUnsupported, format, args...)
}

// writeError answers err in the OCI error body. Domain errors are mapped to
// the spec's codes; anything else is logged and answered as a generic
// failure without its text.
func (r *Registry) writeError(c echo.Context, err error) {
	w, req := c.Response(), c.Request()
	var e *Error
	if slow := httpx.TooSlow(c); slow != nil {
		// The body was cut for its rate (decision 18): whatever the
		// handler made of the failed read, that is the cause.
		code := CodeBlobUploadInvalid
		if strings.Contains(req.URL.Path, "/manifests/") {
			code = CodeManifestInvalid
		}
		e = newError(http.StatusRequestTimeout, code, "%s", chartctl.ErrorMessage(slow))
	} else if !errors.As(err, &e) {
		e = r.fromDomain(req, err)
	}
	if e.Status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", r.challenge(req, ""))
	}
	if e.Status == http.StatusTooManyRequests && e.RetryAfter > 0 && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Messages name places such as "<repository>/<chart name>".
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"errors": []map[string]any{errorEntry(e)}})
	b := buf.Bytes()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

func errorEntry(e *Error) map[string]any {
	m := map[string]any{"code": e.Code, "message": e.Message}
	if e.Detail != nil {
		m["detail"] = e.Detail
	}
	return m
}

// fromDomain maps an error of the domain or a store to an OCI error.
func (r *Registry) fromDomain(req *http.Request, err error) *Error {
	msg := chartctl.ErrorMessage(err)
	switch chartctl.ErrorCode(err) {
	case chartctl.EINVALID, chartctl.ECONFLICT:
		return newError(http.StatusBadRequest, CodeManifestInvalid, "%s", msg)
	case chartctl.EUNAUTHORIZED:
		return newError(http.StatusUnauthorized, CodeUnauthorized, "%s", msg)
	case chartctl.EFORBIDDEN:
		return newError(http.StatusForbidden, CodeDenied, "%s", msg)
	case chartctl.EQUOTA:
		// §15: a push over quota is DENIED with /v1's message.
		return newError(http.StatusForbidden, CodeDenied, "%s", msg)
	case chartctl.EPOLICY:
		// §18: an admission policy's refusal is DENIED, its message
		// naming every rule; the detail lists them as /v1 does.
		e := newError(http.StatusForbidden, CodeDenied, "%s", msg)
		e.Detail = map[string]any{"violations": httpx.Violations(err)}
		return e
	case chartctl.ENOTFOUND:
		return newError(http.StatusNotFound, CodeNameUnknown, "%s", msg)
	case chartctl.ETOOLARGE:
		return newError(http.StatusRequestEntityTooLarge, CodeSizeInvalid, "%s", msg)
	case chartctl.ERATELIMIT:
		return newError(http.StatusTooManyRequests, CodeTooManyRequests, "%s", msg)
	case chartctl.EUNAVAILABLE:
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "%s", msg)
	case chartctl.EUPSTREAM:
		// §18: a proxy repository's upstream failed with nothing cached.
		return newError(http.StatusBadGateway, CodeUnavailable, "%s", msg)
	}
	if m := httpx.StorageFault(err); m != "" {
		// As on /v1: the operator must act, the client may retry.
		r.Logger.Error("storage fault", "method", req.Method, "path", req.URL.Path, "err", err)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "%s", m)
	}
	r.Logger.Error("registry request failed", "method", req.Method, "path", req.URL.Path, "err", err)
	return newError(http.StatusInternalServerError, CodeUnknown, "Internal error; the server logged it.")
}
