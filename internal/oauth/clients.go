package oauth

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
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
	pr := server.PrincipalOf(c)
	if !pr.IsAdmin() {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Only a server admin may register OAuth clients.")
	}
	if all := chartctl.Scopes(chartctl.AllScopes); !pr.Scopes.Covers(all) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="chartctl", error="insufficient_scope", scope="`+all.String()+`"`)
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Registering an OAuth client needs a credential with every scope (%s); this one has %s.", all.String(), pr.Scopes.String())
	}
	var req client.CreateOAuthClientRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	name := strings.TrimSpace(req.Name)
	if name == "" || len(name) > 100 {
		return chartctl.Invalid("name", "name is required (1-100 characters).")
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
	if err := p.opts.OAuth.CreateOAuthClient(c.Request().Context(), cl); err != nil {
		return err
	}
	out := client.OAuthClient{
		ClientID: cl.ID, ClientSecret: secret, Name: cl.Name, RedirectURIs: cl.RedirectURIs,
		Public: cl.Public, CreatedAt: cl.CreatedAt,
	}
	b, err := json.Marshal(struct {
		Data client.OAuthClient `json:"data"`
	}{out})
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "application/json; charset=utf-8", append(b, '\n'))
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

// decodeJSON reads a JSON body as the server's /v1 handlers do: a JSON
// media type, at most 1 MiB, no unknown fields, one value.
func decodeJSON(c echo.Context, v any) error {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return chartctl.Errorf(chartctl.EMEDIATYPE, "Send the request body as JSON with Content-Type: application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, 1<<20))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return chartctl.Errorf(chartctl.ETOOLARGE, "The JSON body is larger than 1 MiB.")
		}
		return chartctl.Invalid("body", "Could not read the request body.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return chartctl.Invalid(te.Field, "Invalid %s: expected %s.", te.Field, te.Type.String())
		}
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			return chartctl.Invalid(field, "Unknown field %q in the request body.", field)
		}
		return chartctl.Invalid("body", "The request body is not valid JSON.")
	}
	if dec.More() {
		return chartctl.Invalid("body", "The request body must hold one JSON object.")
	}
	return nil
}
