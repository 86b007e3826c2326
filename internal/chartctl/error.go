// Package chartctl is the domain of the chart repository service: its
// resources (repositories, chart versions, organizations, teams, members,
// users, API keys), the rules that govern them (names, roles, scopes) and the
// interfaces that storage backends implement.
//
// It imports nothing of this module, so a new backend (PostgreSQL for
// metadata, an object store for blobs) implements these interfaces without
// touching a handler.
package chartctl

import (
	"errors"
	"fmt"
)

// Error codes. They are the `error.code` strings of the HTTP contract, so the
// transport maps them to statuses with one table (see client.HTTPStatus).
const (
	EINVALID      = "invalid_parameter"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ENOTFOUND     = "not_found"
	EMETHOD       = "method_not_allowed"
	ECONFLICT     = "conflict"
	ETOOLARGE     = "payload_too_large"
	EMEDIATYPE    = "unsupported_media_type"
	ERATELIMIT    = "rate_limit_exceeded"
	EINTERNAL     = "internal_error"
	EUNAVAILABLE  = "unavailable"
	// EQUOTA: an upload would pass a repository's or organization's quota.
	EQUOTA = "quota_exceeded"
	// ETIMEOUT: an upload body arrived slower than the minimum upload rate.
	ETIMEOUT = "request_timeout"
)

// Error is an error a person may read: its Message is shown to API callers
// as is, so it never carries internal details (paths, storage errors).
type Error struct {
	// Code is one of the E* constants.
	Code string
	// Message is written for a person.
	Message string
	// Parameter names the offending request parameter, for EINVALID.
	Parameter string
	// MissingScope names the scope a credential lacks, for an EFORBIDDEN
	// caused by scope rather than role (transports add RFC 6750's
	// insufficient_scope challenge).
	MissingScope Scope
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("chartctl error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error naming param.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Parameter: param, Message: fmt.Sprintf(format, args...)}
}

// ScopeRequired returns the EFORBIDDEN error of a credential that lacks sc.
func ScopeRequired(sc Scope) *Error {
	return &Error{Code: EFORBIDDEN, Message: fmt.Sprintf("This credential lacks the %s scope.", sc), MissingScope: sc}
}

// ErrorMissingScope returns the scope named by the *Error in err's chain,
// "" if none.
func ErrorMissingScope(err error) Scope {
	var e *Error
	if errors.As(err, &e) {
		return e.MissingScope
	}
	return ""
}

// ErrorCode returns the code of the *Error in err's chain, "" for nil and
// EINTERNAL for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	// The common case first: the *Error itself, found without errors.As,
	// whose target escapes to the heap on every call.
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the human message of the *Error in err's chain, or a
// generic message for any other error (whose text may leak internals).
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// ErrorParameter returns the parameter named by an EINVALID error, or "".
func ErrorParameter(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Parameter
	}
	return ""
}
