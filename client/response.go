package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Rate is the state of the rate-limit bucket with the fewest requests left,
// as the X-RateLimit-* headers of a response report it. It is the zero
// Rate when the response had no such headers (unauthenticated endpoints).
type Rate struct {
	// Limit is the bucket's allowance per window.
	Limit int
	// Remaining is how many requests are left in the window.
	Remaining int
	// Used is how many requests the window has counted.
	Used int
	// Reset is when the window resets.
	Reset time.Time
	// Resource names the bucket: "global", "upload" or "search".
	Resource string
}

// Response is a server's answer: the *http.Response (its body already
// read and closed), plus what the client read from it.
type Response struct {
	*http.Response
	// Rate is read from the X-RateLimit-* headers.
	Rate Rate
	// RequestID is the X-Request-Id header: quote it when reporting a problem.
	RequestID string
	// Meta is the pagination of a list answer, nil for other answers.
	Meta *Meta
}

// NextPage returns the number of the page after this one, or 0 when this
// answer is the last page (or not a list).
func (r *Response) NextPage() int {
	if r == nil || r.Meta == nil || r.Meta.Page < 1 || r.Meta.Limit < 1 {
		return 0
	}
	if r.Meta.Page*r.Meta.Limit >= r.Meta.Total {
		return 0
	}
	return r.Meta.Page + 1
}

// newResponse reads the headers of r.
func newResponse(r *http.Response) *Response {
	return &Response{
		Response:  r,
		Rate:      parseRate(r.Header),
		RequestID: r.Header.Get("X-Request-Id"),
	}
}

// parseRate reads the X-RateLimit-* headers; malformed values read as 0.
func parseRate(h http.Header) Rate {
	var r Rate
	atoi := func(name string) int {
		n, _ := strconv.Atoi(strings.TrimSpace(h.Get(name)))
		return n
	}
	r.Limit = atoi("X-RateLimit-Limit")
	r.Remaining = atoi("X-RateLimit-Remaining")
	r.Used = atoi("X-RateLimit-Used")
	r.Resource = h.Get("X-RateLimit-Resource")
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs > 0 {
			r.Reset = time.Unix(secs, 0).UTC()
		}
	}
	return r
}

// Error is an answer of the server other than 2xx.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the contract's error code, such as CodeNotFound; for an answer
	// without an error body (a proxy's 502) it is derived from the status.
	Code string
	// Message is the server's explanation, written for a person.
	Message string
	// Parameter names the offending parameter of a 400 answer.
	Parameter string
	// RequestID is the answer's X-Request-Id.
	RequestID string
	// Violations are the rules an admission policy refused (422
	// policy_violation).
	Violations []Violation
	// RetryAfter is how long the server asked the client to wait (429, 503).
	RetryAfter time.Duration
	// Rate is the rate-limit state the answer reported.
	Rate Rate
	// Method and URL identify the request.
	Method string
	URL    string
}

// Error implements the error interface: the server's message first, then
// what a bug report needs.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	fmt.Fprintf(&b, " (%d %s", e.StatusCode, e.Code)
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, ", request id %s", e.RequestID)
	}
	b.WriteString(")")
	return b.String()
}

// CheckResponse returns nil for a 2xx answer and an *Error for any other,
// read from the contract's error body when there is one. It reads and
// closes nothing on success; on failure it reads the body (up to 1 MiB)
// and leaves closing it to the caller.
func CheckResponse(r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode < 300 {
		return nil
	}
	e := &Error{
		StatusCode: r.StatusCode,
		RequestID:  r.Header.Get("X-Request-Id"),
		Rate:       parseRate(r.Header),
	}
	if r.Request != nil {
		e.Method = r.Request.Method
		e.URL = r.Request.URL.Redacted()
	}
	var body ErrorBody
	if data, err := io.ReadAll(io.LimitReader(r.Body, maxErrorBody)); err == nil && len(data) > 0 {
		if json.Unmarshal(data, &body) != nil {
			body = ErrorBody{}
		}
	}
	e.Code = body.Error.Code
	e.Message = body.Error.Message
	e.Parameter = body.Error.Parameter
	e.Violations = body.Error.Violations
	if e.Code == "" {
		e.Code = CodeForStatus(r.StatusCode)
	}
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(r.StatusCode))
		if e.Message == "" {
			e.Message = "unexpected status " + strconv.Itoa(r.StatusCode)
		}
	}
	now := time.Now()
	e.RetryAfter = parseRetryAfter(r.Header.Get("Retry-After"), now)
	if e.RetryAfter == 0 && body.Error.RetryAfter > 0 {
		e.RetryAfter = time.Duration(body.Error.RetryAfter) * time.Second
	}
	if e.RetryAfter == 0 && r.StatusCode == http.StatusTooManyRequests &&
		e.Rate.Remaining == 0 && e.Rate.Reset.After(now) {
		e.RetryAfter = e.Rate.Reset.Sub(now).Round(time.Second)
	}
	return e
}

// hasCode reports whether err is an *Error with the given code.
func hasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// IsNotFound reports whether err is a 404 not_found answer: the resource
// does not exist or the caller may not see it.
func IsNotFound(err error) bool { return hasCode(err, CodeNotFound) }

// IsUnauthorized reports whether err is a 401 answer: the credential is
// missing, unknown, expired or revoked.
func IsUnauthorized(err error) bool { return hasCode(err, CodeUnauthorized) }

// IsForbidden reports whether err is a 403 answer: the token's scopes or the
// user's role do not allow the request.
func IsForbidden(err error) bool { return hasCode(err, CodeForbidden) }

// IsConflict reports whether err is a 409 answer: the name is taken, or the
// chart version exists with another digest.
func IsConflict(err error) bool { return hasCode(err, CodeConflict) }

// IsRateLimited reports whether err is a 429 answer; its RetryAfter says
// how long to wait.
func IsRateLimited(err error) bool { return hasCode(err, CodeRateLimitExceeded) }

// droppedConnection reports whether a transport error means the connection
// broke before an answer arrived (reset, closed, refused), the failures a
// retry may cure.
func droppedConnection(err error) bool {
	return errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE)
}
