package httpx

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

const principalKey = "chartctl.principal"

// SetPrincipal records the authenticated caller of a request.
func SetPrincipal(c echo.Context, p *chartctl.Principal) { c.Set(principalKey, p) }

// PrincipalOf returns the authenticated caller of a request, nil for an
// anonymous one.
func PrincipalOf(c echo.Context) *chartctl.Principal {
	p, _ := c.Get(principalKey).(*chartctl.Principal)
	return p
}

// RequireScope returns chartctl.ScopeRequired(sc) unless the request's
// credential carries sc; the error handler adds the insufficient_scope
// challenge.
func RequireScope(c echo.Context, sc chartctl.Scope) error {
	if PrincipalOf(c).Scopes.Allows(sc) {
		return nil
	}
	return chartctl.ScopeRequired(sc)
}

// Authenticator resolves the credential a request carries. The server
// implements it once (API keys, OAuth access tokens, the failed-attempt
// throttle, the credential cache); protocol packages call it.
type Authenticator interface {
	// OptionalPrincipal resolves an Authorization header of scheme Basic
	// (any user name, the token as password) or Bearer: nil, nil when the
	// request has none. A refused credential is EUNAUTHORIZED with
	// challenge set as WWW-Authenticate; a throttled client ERATELIMIT.
	OptionalPrincipal(c echo.Context, challenge string) (*chartctl.Principal, error)
}

// Limiter charges requests to the rate-limit buckets of §7.
type Limiter interface {
	// TakeRate charges p's global bucket and the extra buckets in one
	// all-or-nothing step, sets the X-RateLimit-* headers of the tightest,
	// and returns ERATELIMIT (with Retry-After set) when any refuses.
	TakeRate(c echo.Context, p *chartctl.Principal, extra ...ratelimit.Request) error
}

// AccessTokenVerifier checks OAuth access tokens. The OAuth package
// implements it; with none set, only API keys authenticate.
type AccessTokenVerifier interface {
	// VerifyAccessToken returns the user, grant and client an access
	// token belongs to and the scopes it carries. Returns EUNAUTHORIZED
	// for an unknown, expired or revoked token.
	VerifyAccessToken(ctx context.Context, value string) (userID, grantID, clientID string, scopes chartctl.Scopes, err error)
}

// RetrySeconds rounds a wait up to whole seconds, at least one.
func RetrySeconds(d time.Duration) int {
	n := int((d + time.Second - 1) / time.Second)
	return max(n, 1)
}

// SetRetryAfter sets the Retry-After header to d in whole seconds.
func SetRetryAfter(c echo.Context, d time.Duration) {
	c.Response().Header().Set("Retry-After", strconv.Itoa(RetrySeconds(d)))
}
