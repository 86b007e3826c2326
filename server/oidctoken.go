package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/publishing"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// bucketOIDCToken is the rate-limit bucket of POST /v1/oidc/token, keyed
// by client address (decision 8): the endpoint takes no credential, so
// neither the global bucket nor the authentication throttle applies.
const bucketOIDCToken = "oidc_token"

// auditedKey marks a request whose handler wrote its own audit entry,
// refusals included, so audit does not add a second one.
const auditedKey = "chartctl.audited"

// oidcTokenError is an RFC 6749 §5.2 error body, which RFC 8693 §2.2.2
// token exchange refusals use.
type oidcTokenError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// handleOIDCToken is the token exchange of trusted publishing (RFC 8693):
// a CI job's OIDC ID token for a credential of the robot whose trusted
// publisher it matches, living at most 15 minutes. Refusals are 400 with
// an RFC 8693 error naming the failed check.
func (s *Server) handleOIDCToken(c echo.Context) error {
	if d := s.limits.Take(ratelimit.Request{Bucket: bucketOIDCToken, Key: s.clientIP(c)}); !d.Allowed {
		s.refuseRate(c, d)
		return writeNoStore(c, http.StatusTooManyRequests, oidcTokenError{Error: "rate_limit_exceeded",
			Description: fmt.Sprintf("Too many token exchanges from this address; retry in %d seconds.", httpx.RetrySeconds(d.RetryAfter))})
	} else if len(d.Results) > 0 {
		setRateHeaders(c, d.Tightest)
	}
	req, desc := readTokenForm(c)
	if desc != "" {
		// Refused before the exchange saw it: audited as its refusals are.
		s.app.AuditExchangeRefusal(c.Request().Context(), &publishing.Refusal{Code: "invalid_request", Check: publishing.CheckRequest, Description: desc})
		c.Set(auditedKey, true)
		return writeNoStore(c, http.StatusBadRequest, oidcTokenError{Error: "invalid_request", Description: desc})
	}
	ex, err := s.app.ExchangeToken(c.Request().Context(), req)
	var refused *publishing.Refusal
	switch {
	case errors.As(err, &refused):
		c.Set(auditedKey, true)
		return writeNoStore(c, http.StatusBadRequest, oidcTokenError{Error: refused.Code, Description: refused.Description})
	case err != nil:
		return err
	}
	c.Set(auditedKey, true)
	secs := int(math.Ceil(ex.ExpiresAt.Sub(s.Now()).Seconds()))
	secs = max(min(secs, int(app.ExchangedTTL.Seconds())), 0)
	return writeNoStore(c, http.StatusOK, client.ExchangedToken{AccessToken: ex.Token, TokenType: "Bearer", ExpiresIn: secs,
		IssuedTokenType: app.TokenTypeAccessToken})
}

// readTokenForm reads the form-encoded parameters of a token exchange,
// refusing other media types, large bodies and repeated parameters
// (RFC 6749 §3.2); desc says what is wrong.
func readTokenForm(c echo.Context) (req app.ExchangeRequest, desc string) {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return req, "Send the parameters form-encoded (Content-Type: application/x-www-form-urlencoded), as RFC 8693 says."
	}
	c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, 64<<10)
	if err := c.Request().ParseForm(); err != nil {
		return req, "The request body could not be read (at most 64 KiB of form parameters)."
	}
	form := c.Request().PostForm
	for k, vs := range form {
		if len(vs) > 1 {
			return req, fmt.Sprintf("The %s parameter is repeated.", k)
		}
	}
	return app.ExchangeRequest{GrantType: form.Get("grant_type"), SubjectToken: form.Get("subject_token"),
		SubjectTokenType: form.Get("subject_token_type"), RequestedTokenType: form.Get("requested_token_type"),
		Robot: form.Get("robot")}, ""
}

// writeNoStore writes v as JSON with status, forbidding caches: token
// endpoint answers carry credentials (RFC 6749 §5.1).
func writeNoStore(c echo.Context, status int, v any) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, "application/json; charset=utf-8", append(b, '\n'))
}
