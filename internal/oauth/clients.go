package oauth

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/token"
)

// handleCreateClient registers an OAuth client (server admins only, with
// a credential that carries every scope). A confidential client's secret
// is in this response only; it is stored hashed.
//
// A registered client can ask any user of the server for any scope on
// this server's own consent page, so registering one is as powerful as
// every scope together: a narrow admin credential (a read-only CI key, an
// access token a third-party app holds) must not do it.
func (p *Provider) handleCreateClient(c echo.Context) error {
	if err := app.RequireAdmin(httpx.PrincipalOf(c)); err != nil {
		return err
	}
	var req client.CreateOAuthClientRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	name, err := app.ValidateName("client", req.Name)
	if err != nil {
		return err
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > 10 {
		return chartctl.Invalid("redirect_uris", "redirect_uris must list 1 to 10 URIs.")
	}
	for _, u := range req.RedirectURIs {
		if err := validateRedirectURI(u); err != nil {
			return err
		}
	}
	var idBytes [12]byte
	_, _ = rand.Read(idBytes[:])
	cl := &chartctl.OAuthClient{
		ID: "oac_" + hex.EncodeToString(idBytes[:]), Name: name, RedirectURIs: req.RedirectURIs,
		Public: req.Public, CreatedAt: p.opts.Now().UTC().Truncate(time.Second),
	}
	var secret string
	if !req.Public {
		secret, cl.SecretHash = token.New(secretPrefix)
	}
	ctx := c.Request().Context()
	if err := p.opts.OAuth.CreateOAuthClient(ctx, cl); err != nil {
		return err
	}
	// A refusal or failure is audited by the server's audit middleware
	// (the route is in its table); the success here, as the client
	// record carries no audit entry of its own.
	if p.opts.App != nil {
		p.opts.App.AuditSuccess(ctx, "oauth_client.create", cl.ID, "")
	}
	out := client.OAuthClient{
		ClientID: cl.ID, ClientSecret: secret, Name: cl.Name, RedirectURIs: cl.RedirectURIs,
		Public: cl.Public, CreatedAt: cl.CreatedAt,
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return httpx.Data(c, out)
}

// validateRedirectURI accepts absolute https URIs, and http URIs on a
// loopback host (native apps, RFC 8252); never fragments or user info.
func validateRedirectURI(s string) error {
	bad := chartctl.Invalid("redirect_uris", "Invalid redirect URI %q: use an absolute https URL (http only on 127.0.0.1, [::1] or localhost), without a fragment.", s)
	if len(s) > 2000 {
		return bad
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || strings.Contains(s, "#") || u.User != nil {
		return bad
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		switch u.Hostname() {
		case "127.0.0.1", "::1", "localhost":
			return nil
		}
	}
	return bad
}
