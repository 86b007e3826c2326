package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

// oauthError is an RFC 6749 §5.2 error.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	status      int
	basic       bool
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func errf(code, format string, args ...any) *oauthError {
	return &oauthError{Code: code, Description: fmt.Sprintf(format, args...)}
}

// writeOAuthError answers with an RFC 6749 error body: 401 for
// invalid_client (with a Basic challenge when the client tried Basic),
// 500 for server_error, 400 otherwise.
func writeOAuthError(c echo.Context, e *oauthError) error {
	status := e.status
	if status == 0 {
		switch e.Code {
		case "invalid_client":
			status = http.StatusUnauthorized
		case "server_error":
			status = http.StatusInternalServerError
		default:
			status = http.StatusBadRequest
		}
	}
	if e.Code == "invalid_client" && e.basic {
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="chartctl"`)
	}
	return writeNoStore(c, status, e)
}

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

// tokenResponse is the RFC 6749 §5.1 success body.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// readForm parses a form-encoded POST body, refusing other media types and
// repeated parameters (RFC 6749 §3.2).
func readForm(c echo.Context) (url.Values, *oauthError) {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, errf("invalid_request", "Send the parameters form-encoded (Content-Type: application/x-www-form-urlencoded).")
	}
	c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, 64<<10)
	if err := c.Request().ParseForm(); err != nil {
		return nil, errf("invalid_request", "The request body could not be read.")
	}
	form := c.Request().PostForm
	for k, vs := range form {
		if len(vs) > 1 {
			return nil, errf("invalid_request", "The %s parameter is repeated.", k)
		}
	}
	return form, nil
}

// authenticateClient identifies the calling client: HTTP Basic or
// client_id (+ client_secret) in the form. Confidential clients must prove
// their secret; public clients have none.
func (p *Provider) authenticateClient(ctx context.Context, r *http.Request, form url.Values) (*chartctl.OAuthClient, *oauthError) {
	id, secret := form.Get("client_id"), form.Get("client_secret")
	basicID, basicSecret, basic := r.BasicAuth()
	if basic {
		var err1, err2 error
		basicID, err1 = url.QueryUnescape(basicID)
		basicSecret, err2 = url.QueryUnescape(basicSecret)
		if err1 != nil || err2 != nil {
			return nil, &oauthError{Code: "invalid_client", Description: "Malformed HTTP Basic credentials.", basic: true}
		}
		if secret != "" || (id != "" && id != basicID) {
			return nil, errf("invalid_request", "Authenticate the client one way only: HTTP Basic or form parameters.")
		}
		id, secret = basicID, basicSecret
	}
	fail := &oauthError{Code: "invalid_client", Description: "Client authentication failed.", basic: basic}
	if id == "" {
		fail.Description = "client_id is required."
		return nil, fail
	}
	cl, err := p.client(ctx, id)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, fail
	} else if err != nil {
		p.opts.Logger.Error("load oauth client", "err", err)
		return nil, errf("server_error", "The client could not be loaded.")
	}
	if cl.Public {
		if secret != "" {
			fail.Description = "This is a public client; it has no secret."
			return nil, fail
		}
		return cl, nil
	}
	if secret == "" || subtle.ConstantTimeCompare(token.Hash(secret), cl.SecretHash) != 1 {
		return nil, fail
	}
	return cl, nil
}

// handleToken is the token endpoint: authorization_code, refresh_token
// and device_code (RFC 8628) grants.
func (p *Provider) handleToken(c echo.Context) error {
	form, oe := readForm(c)
	if oe != nil {
		return writeOAuthError(c, oe)
	}
	cl, oe := p.authenticateClient(c.Request().Context(), c.Request(), form)
	if oe != nil {
		return writeOAuthError(c, oe)
	}
	switch gt := form.Get("grant_type"); gt {
	case "authorization_code":
		return p.exchangeCode(c, cl, form)
	case "refresh_token":
		return p.refresh(c, cl, form)
	case DeviceGrantType:
		return p.pollDevice(c, cl, form)
	case "":
		return writeOAuthError(c, errf("invalid_request", "grant_type is required."))
	default:
		return writeOAuthError(c, errf("unsupported_grant_type", "Supported grant types are authorization_code, refresh_token and %s.", DeviceGrantType))
	}
}

// mint makes an access and a refresh token of one grant.
func (p *Provider) mint(cl *chartctl.OAuthClient, userID, grantID, parentID string, scopes chartctl.Scopes) (*tokenResponse, []*chartctl.OAuthToken) {
	now := p.opts.Now().UTC()
	at, atHash := token.New(token.AccessTokenPrefix)
	rt, rtHash := token.New(token.RefreshTokenPrefix)
	recs := []*chartctl.OAuthToken{
		{Hash: atHash, Kind: chartctl.AccessToken, GrantID: grantID, ParentID: parentID, ClientID: cl.ID, UserID: userID, Scopes: scopes, CreatedAt: now, ExpiresAt: now.Add(p.opts.AccessTokenTTL)},
		{Hash: rtHash, Kind: chartctl.RefreshToken, GrantID: grantID, ParentID: parentID, ClientID: cl.ID, UserID: userID, Scopes: scopes, CreatedAt: now, ExpiresAt: now.Add(p.opts.RefreshTokenTTL)},
	}
	return &tokenResponse{
		AccessToken: at, TokenType: "Bearer", ExpiresIn: int(p.opts.AccessTokenTTL.Seconds()),
		RefreshToken: rt, Scope: scopes.String(),
	}, recs
}

// s256 is the PKCE S256 transform of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (p *Provider) exchangeCode(c echo.Context, cl *chartctl.OAuthClient, form url.Values) error {
	code, redirect, verifier := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier")
	if code == "" {
		return writeOAuthError(c, errf("invalid_request", "code is required."))
	}
	if redirect == "" {
		return writeOAuthError(c, errf("invalid_request", "redirect_uri is required."))
	}
	invalid := errf("invalid_grant", "The authorization code is invalid, expired, or was issued to another client or redirect URI.")
	if !token.Valid(codePrefix, code) {
		return writeOAuthError(c, invalid)
	}
	var resp *tokenResponse
	err := p.opts.OAuth.RedeemAuthorizationCode(c.Request().Context(), token.Hash(code), p.opts.Now(), func(ac *chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		if ac.ClientID != cl.ID || ac.RedirectURI != redirect {
			return nil, invalid
		}
		switch {
		case ac.CodeChallenge == "" && verifier != "":
			// A verifier for a code issued without a challenge is a
			// downgrade attempt (RFC 9700 §2.1.1).
			return nil, errf("invalid_grant", "This code was issued without a PKCE challenge; a code_verifier cannot be used with it.")
		case ac.CodeChallenge == "":
			return nil, errf("invalid_grant", "This code was issued without a PKCE challenge and cannot be exchanged.")
		case verifier == "":
			return nil, errf("invalid_grant", "code_verifier is required.")
		case len(verifier) < 43 || len(verifier) > 128 || !validPKCEValue(verifier) ||
			subtle.ConstantTimeCompare([]byte(s256(verifier)), []byte(ac.CodeChallenge)) != 1:
			return nil, errf("invalid_grant", "The code_verifier does not match the code_challenge.")
		}
		var recs []*chartctl.OAuthToken
		resp, recs = p.mint(cl, ac.UserID, ac.GrantID, "", ac.Scopes)
		return recs, nil
	})
	return p.finish(c, resp, err, "The authorization code was already used; the tokens issued for it are now revoked.", invalid)
}

// finish answers a code exchange or refresh: the tokens, or the error.
func (p *Provider) finish(c echo.Context, resp *tokenResponse, err error, reused string, invalid *oauthError) error {
	var oe *oauthError
	switch {
	case err == nil:
		return writeNoStore(c, http.StatusOK, resp)
	case errors.As(err, &oe):
		return writeOAuthError(c, oe)
	case chartctl.ErrorCode(err) == chartctl.ECONFLICT:
		return writeOAuthError(c, errf("invalid_grant", "%s", reused))
	case chartctl.ErrorCode(err) == chartctl.ENOTFOUND:
		return writeOAuthError(c, invalid)
	}
	p.opts.Logger.Error("issue tokens", "err", err)
	return writeOAuthError(c, errf("server_error", "The tokens could not be issued."))
}

func (p *Provider) refresh(c echo.Context, cl *chartctl.OAuthClient, form url.Values) error {
	rt := form.Get("refresh_token")
	if rt == "" {
		return writeOAuthError(c, errf("invalid_request", "refresh_token is required."))
	}
	invalid := errf("invalid_grant", "The refresh token is invalid, expired or revoked.")
	if !token.Valid(token.RefreshTokenPrefix, rt) {
		return writeOAuthError(c, invalid)
	}
	var want chartctl.Scopes
	if s := strings.TrimSpace(form.Get("scope")); s != "" {
		var err error
		if want, err = chartctl.NewScopes("scope", strings.Fields(s)); err != nil {
			return writeOAuthError(c, errf("invalid_scope", "%s", chartctl.ErrorMessage(err)))
		}
	}
	var (
		resp   *tokenResponse
		userID string
	)
	err := p.opts.OAuth.RotateRefreshToken(c.Request().Context(), token.Hash(rt), p.opts.Now(), func(old *chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
		if old.ClientID != cl.ID {
			return nil, invalid
		}
		scopes := old.Scopes
		if want != nil {
			// A refresh may narrow the scope, never widen it (RFC 6749 §6);
			// X:write covers X:read.
			if !old.Scopes.Covers(want) {
				return nil, errf("invalid_scope", "The requested scope exceeds what was granted (%s).", old.Scopes.String())
			}
			scopes = want
		}
		var recs []*chartctl.OAuthToken
		resp, recs = p.mint(cl, old.UserID, old.GrantID, old.ID, scopes)
		userID = old.UserID
		return recs, nil
	})
	if err == nil && p.opts.App != nil {
		// Team sync at every refresh (CONTRACT §18 decision 7): the
		// groups of the user's last IdP sign-in set their bound teams
		// again. A failure is logged; the tokens are already issued.
		if err := p.opts.App.RefreshGroups(c.Request().Context(), userID); err != nil {
			p.opts.Logger.Error("team sync at refresh", "user", userID, "err", err)
		}
	}
	return p.finish(c, resp, err, "The refresh token was already used; every token of this grant is now revoked. Sign in again.", invalid)
}

// handleRevoke is RFC 7009 revocation. It answers 200 whether or not the
// token existed, and revokes only tokens issued to the calling client.
func (p *Provider) handleRevoke(c echo.Context) error {
	form, oe := readForm(c)
	if oe != nil {
		return writeOAuthError(c, oe)
	}
	cl, oe := p.authenticateClient(c.Request().Context(), c.Request(), form)
	if oe != nil {
		return writeOAuthError(c, oe)
	}
	value := form.Get("token")
	if value == "" {
		return writeOAuthError(c, errf("invalid_request", "token is required."))
	}
	if token.Valid(token.AccessTokenPrefix, value) || token.Valid(token.RefreshTokenPrefix, value) {
		ctx := c.Request().Context()
		h := token.Hash(value)
		t, err := p.opts.OAuth.OAuthToken(ctx, h)
		switch {
		case err == nil && t.ClientID == cl.ID:
			if err := p.opts.OAuth.RevokeOAuthToken(ctx, h); err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				p.opts.Logger.Error("revoke token", "err", err)
				return writeOAuthError(c, &oauthError{Code: "server_error", Description: "The token could not be revoked; try again.", status: http.StatusServiceUnavailable})
			}
		case err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND:
			p.opts.Logger.Error("load token", "err", err)
			return writeOAuthError(c, &oauthError{Code: "server_error", Description: "The token could not be revoked; try again.", status: http.StatusServiceUnavailable})
		}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.NoContent(http.StatusOK)
}

// VerifyAccessToken implements server.AccessTokenVerifier: it reads the
// token on every call (no cache), so revocation takes effect at once.
func (p *Provider) VerifyAccessToken(ctx context.Context, value string) (userID, grantID, clientID string, scopes chartctl.Scopes, err error) {
	t, err := p.opts.OAuth.OAuthToken(ctx, token.Hash(value))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return "", "", "", nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid or revoked access token.")
	} else if err != nil {
		return "", "", "", nil, err
	}
	switch {
	case t.Kind != chartctl.AccessToken:
		return "", "", "", nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "This is not an access token.")
	case t.Revoked:
		return "", "", "", nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "This access token was revoked.")
	case t.Expired(p.opts.Now()):
		return "", "", "", nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "This access token expired; refresh it or sign in again.")
	}
	return t.UserID, t.GrantID, t.ClientID, t.Scopes, nil
}

// metadata is the RFC 8414 document.
type metadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
}

func (p *Provider) handleMetadata(c echo.Context) error {
	iss := p.issuer(c)
	auth := []string{"none", "client_secret_basic", "client_secret_post"}
	return c.JSON(http.StatusOK, metadata{
		Issuer:                            iss,
		AuthorizationEndpoint:             iss + "/oauth/authorize",
		TokenEndpoint:                     iss + "/oauth/token",
		RevocationEndpoint:                iss + "/oauth/revoke",
		DeviceAuthorizationEndpoint:       iss + "/oauth/device_authorization",
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token", DeviceGrantType},
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: auth,
		RevocationEndpointAuthMethods:     auth,
		ScopesSupported:                   chartctl.Scopes(chartctl.AllScopes).Strings(),
		AuthorizationResponseISSSupported: true,
	})
}
