package httpx

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// UnescapePathParams is middleware that decodes percent-encoded path
// parameters. Echo routes on the raw path whenever a request escaped more
// than Go would (a '+' sent as %2B, an '@' as %40, as JavaScript's
// encodeURIComponent and Python's quote do), and then hands the handlers
// the parameters still escaped, so "1.0.0%2Bbuild.1" would name no chart
// version. Decoded, every spelling of a segment names the same resource.
func UnescapePathParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.RawPath == "" {
			// Routed on the decoded path: the values are decoded already.
			return next(c)
		}
		names, values := c.ParamNames(), c.ParamValues()
		decoded := make([]string, len(values))
		for i, v := range values {
			d, err := url.PathUnescape(v)
			if err != nil {
				name := "path"
				if i < len(names) {
					name = names[i]
				}
				return chartctl.Invalid(name, "The path segment %q is not valid percent-encoding.", v)
			}
			decoded[i] = d
		}
		c.SetParamValues(decoded...)
		return next(c)
	}
}
