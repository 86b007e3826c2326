package client

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// authTransport adds the bearer token to requests for the server's origin
// and to no other: a redirect to another host, or any other request sent
// through the same http.Client, goes out without it. Because the header is
// added per round trip, on a copy of the request, http.Client never sees it
// and so can never copy it onto a redirected request.
type authTransport struct {
	base   http.RoundTripper
	origin string
	source oauth2.TokenSource
}

// RoundTrip implements http.RoundTripper.
func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if origin(req.URL) != t.origin {
		if req.Header.Get("Authorization") != "" {
			// Never forward a credential someone else set to a foreign host.
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
		}
		return base.RoundTrip(req)
	}
	tok, err := t.source.Token()
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("get token: %w", err)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", tok.Type()+" "+tok.AccessToken)
	return base.RoundTrip(req)
}

// origin returns scheme://host:port of u in a canonical form (lower case,
// default port spelled out), so that equal origins compare equal.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
