package oauth

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/internal/web"
)

// authRequest is a validated authorization request.
type authRequest struct {
	client      *chartctl.OAuthClient
	redirectURI string
	state       string
	challenge   string
	scopes      chartctl.Scopes
	// params are the request's parameters, carried through the consent
	// form and the sign-in detour.
	params url.Values
}

// authParams are the parameters of an authorization request.
var authParams = []string{"client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method"}

// pageError is an authorization request error shown on a page, because
// the redirect URI cannot be trusted.
type pageError struct {
	status  int
	heading string
	message string
}

// parseAuthorize validates an authorization request. The client and the
// redirect URI are checked first: until both are known good, errors go to
// a page (pe), never to the redirect URI. After that, errors are OAuth
// errors (oe) to send to the redirect URI.
func (p *Provider) parseAuthorize(c echo.Context, vals url.Values) (*authRequest, *pageError, *oauthError) {
	for _, name := range authParams {
		if len(vals[name]) > 1 {
			if name == "client_id" || name == "redirect_uri" {
				return nil, &pageError{http.StatusBadRequest, "Invalid request", "The authorization request repeats the " + name + " parameter."}, nil
			}
		}
	}
	cl, err := p.client(c.Request().Context(), vals.Get("client_id"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, &pageError{http.StatusBadRequest, "Unknown application", "The application that sent you here is not registered with this chartctl server, so it cannot be given access. Tell its developer."}, nil
	} else if err != nil {
		p.opts.Logger.Error("load oauth client", "err", err)
		return nil, &pageError{http.StatusInternalServerError, "Something went wrong", "The application could not be loaded. Try again later."}, nil
	}
	redirect := vals.Get("redirect_uri")
	if redirect == "" || !RedirectURIAllowed(cl, redirect) {
		return nil, &pageError{http.StatusBadRequest, "Invalid redirect address", "The application asked to send you to an address it has not registered with this server, so the request was stopped to protect your account."}, nil
	}
	r := &authRequest{client: cl, redirectURI: redirect, state: vals.Get("state"), params: url.Values{}}
	for _, name := range authParams {
		if v := vals.Get(name); v != "" {
			r.params.Set(name, v)
		}
	}
	for _, name := range authParams {
		if len(vals[name]) > 1 {
			return r, nil, errf("invalid_request", "The %s parameter is repeated.", name)
		}
	}
	if rt := vals.Get("response_type"); rt != "code" {
		if rt == "" {
			return r, nil, errf("invalid_request", "response_type is required and must be code.")
		}
		return r, nil, errf("unsupported_response_type", "Only response_type=code is supported.")
	}
	method, challenge := vals.Get("code_challenge_method"), vals.Get("code_challenge")
	switch {
	case challenge == "":
		return r, nil, errf("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.")
	case method == "":
		return r, nil, errf("invalid_request", "code_challenge_method is required and must be S256.")
	case method != "S256":
		return r, nil, errf("invalid_request", "Only the S256 code_challenge_method is supported.")
	case !validPKCEValue(challenge) || len(challenge) != 43:
		return r, nil, errf("invalid_request", "code_challenge must be the base64url SHA-256 of the code verifier (43 characters).")
	}
	r.challenge = challenge
	scope := strings.TrimSpace(vals.Get("scope"))
	if scope == "" {
		return r, nil, errf("invalid_scope", "scope is required: ask for one or more of %s.", chartctl.Scopes(chartctl.AllScopes).String())
	}
	scopes, err := chartctl.NewScopes("scope", strings.Fields(scope))
	if err != nil {
		return r, nil, errf("invalid_scope", "%s", chartctl.ErrorMessage(err))
	}
	r.scopes = scopes
	return r, nil, nil
}

// validPKCEValue checks the characters RFC 7636 allows in a verifier or
// challenge.
func validPKCEValue(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '.' || b == '_' || b == '~') {
			return false
		}
	}
	return true
}

// redirect sends the browser back to the client with params, plus state
// and iss (RFC 9207, so a client talking to several servers can tell
// which one answered).
func (p *Provider) redirect(c echo.Context, r *authRequest, params url.Values) error {
	u, err := url.Parse(r.redirectURI)
	if err != nil {
		return p.opts.Dashboard.RenderError(c, http.StatusBadRequest, "Invalid redirect address", "The application's redirect address cannot be used.")
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if r.state != "" {
		q.Set("state", r.state)
	}
	q.Set("iss", p.issuer(c))
	u.RawQuery = q.Encode()
	return c.Redirect(http.StatusFound, u.String())
}

func (p *Provider) redirectError(c echo.Context, r *authRequest, oe *oauthError) error {
	return p.redirect(c, r, url.Values{"error": {oe.Code}, "error_description": {oe.Description}})
}

// handleAuthorize validates the request, then shows the sign-in page (no
// session) or the consent page.
func (p *Provider) handleAuthorize(c echo.Context) error {
	r, pe, oe := p.parseAuthorize(c, c.QueryParams())
	if pe != nil {
		return p.opts.Dashboard.RenderError(c, pe.status, pe.heading, pe.message)
	}
	if oe != nil {
		return p.redirectError(c, r, oe)
	}
	u, s := p.opts.Dashboard.Session(c)
	if u == nil {
		return c.Redirect(http.StatusFound, web.SignInURL("/oauth/authorize?"+r.params.Encode()))
	}
	return p.consent(c, r, u, s)
}

func (p *Provider) consent(c echo.Context, r *authRequest, u *chartctl.User, s *chartctl.WebSession) error {
	host := r.redirectURI
	if ru, err := url.Parse(r.redirectURI); err == nil && ru.Host != "" {
		host = ru.Host
	}
	scopes := grantable(r.scopes, u)
	if len(scopes) == 0 {
		return p.redirectError(c, r, errNoGrantableScope)
	}
	cp := web.ConsentPage{
		ClientName: r.client.Name, RedirectHost: host, Scopes: web.ScopeItems(scopes), Action: "/oauth/authorize",
		Admin: scopes.Allows(chartctl.ScopeAdmin), KeysOutlive: scopes.Allows(chartctl.ScopeKeysWrite),
		ReturnTo: "/oauth/authorize?" + r.params.Encode(),
	}
	for _, name := range authParams {
		if v := r.params.Get(name); v != "" {
			cp.Params = append(cp.Params, web.Param{Name: name, Value: v})
		}
	}
	return p.opts.Dashboard.RenderConsent(c, u, s, cp)
}

// handleAuthorizeDecision takes the consent form: approve issues a code,
// deny answers access_denied.
func (p *Provider) handleAuthorizeDecision(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return p.opts.Dashboard.RenderError(c, http.StatusBadRequest, "Invalid request", "The form could not be read.")
	}
	if err := p.opts.Dashboard.CheckCSRF(c); err != nil {
		return p.opts.Dashboard.RenderError(c, http.StatusForbidden, "Request refused", chartctl.ErrorMessage(err))
	}
	r, pe, oe := p.parseAuthorize(c, form)
	if pe != nil {
		return p.opts.Dashboard.RenderError(c, pe.status, pe.heading, pe.message)
	}
	if oe != nil {
		return p.redirectError(c, r, oe)
	}
	u, _ := p.opts.Dashboard.Session(c)
	if u == nil {
		return c.Redirect(http.StatusSeeOther, web.SignInURL("/oauth/authorize?"+r.params.Encode()))
	}
	if form.Get("decision") != "approve" {
		return p.redirectError(c, r, errf("access_denied", "The user denied the request."))
	}
	if len(grantable(r.scopes, u)) == 0 {
		return p.redirectError(c, r, errNoGrantableScope)
	}
	value, hash := token.New(codePrefix)
	now := p.opts.Now().UTC()
	code := &chartctl.AuthorizationCode{
		Hash: hash, ClientID: r.client.ID, UserID: u.ID, RedirectURI: r.redirectURI,
		Scopes: grantable(r.scopes, u), CodeChallenge: r.challenge, GrantID: newGrantID(),
		CreatedAt: now, ExpiresAt: now.Add(CodeTTL),
	}
	if err := p.opts.OAuth.CreateAuthorizationCode(c.Request().Context(), code); err != nil {
		p.opts.Logger.Error("create authorization code", "err", err)
		return p.redirectError(c, r, errf("server_error", "The authorization code could not be issued."))
	}
	return p.redirect(c, r, url.Values{"code": {value}})
}

// errNoGrantableScope answers a request whose only scope is admin from a
// user who is not a server admin.
var errNoGrantableScope = errf("invalid_scope", "Your account cannot grant any of the requested scopes: admin is for server administrators.")

// grantable returns the requested scopes the user can grant: admin only
// for a server admin, so a non-admin is never shown, and never grants, a
// power the account does not have. The consent page shows exactly this
// set and the code carries exactly this set, so a token holds admin only
// when the page showed it and the user approved.
func grantable(requested chartctl.Scopes, u *chartctl.User) chartctl.Scopes {
	out := chartctl.Scopes{}
	for _, sc := range requested {
		if sc == chartctl.ScopeAdmin && !u.Admin {
			continue
		}
		out = append(out, sc)
	}
	return out
}

func newGrantID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "grant_" + hex.EncodeToString(b[:])
}
