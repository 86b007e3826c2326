package server

import (
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// corsV1 lets the listed browser origins call /v1 (§14 --cors-origins),
// preflight requests included, and the OAuth token and revocation
// endpoints, so that a browser-based tool (an OpenAPI console, a portal)
// can finish its own PKCE sign-in; every other path, and every other
// origin, gets no CORS headers, so browsers keep refusing them. It runs
// before routing (and before authentication) because a preflight carries
// no credential. The methods are every method a /v1 route has (a test
// holds them to the OpenAPI document).
func corsV1(origins []string) echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return !strings.HasPrefix(p, "/v1/") && p != "/oauth/token" && p != "/oauth/revoke"
		},
		AllowOrigins: origins,
		AllowMethods: []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"},
		AllowHeaders: []string{"Authorization", "Content-Type", "If-None-Match", "X-Request-Id"},
		ExposeHeaders: []string{"X-Request-Id", "ETag", "Retry-After", "WWW-Authenticate",
			"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset", "X-RateLimit-Resource"},
		MaxAge: 600,
	})
}
