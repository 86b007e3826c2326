package oauth

import (
	"crypto/rand"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/internal/web"
)

// The device authorization grant (RFC 8628).
const (
	// DeviceGrantType is the token endpoint's grant_type for polls.
	DeviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"
	// DeviceCodeTTL is how long a device code and its user code are valid.
	DeviceCodeTTL = 10 * time.Minute
	// DeviceInterval is the least time between polls; each slow_down
	// adds deviceSlowDown (RFC 8628 §3.5).
	DeviceInterval = 5 * time.Second
	deviceSlowDown = 5 * time.Second
	// deviceCodePrefix starts device codes.
	deviceCodePrefix = "chartctl_dc_"
	// userCodeAlphabet holds consonants only, upper case, none that look
	// alike (RFC 8628 §6.1): no vowels (no words), no 0/O or 1/I/L.
	userCodeAlphabet = "BCDFGHJKMNPQRSTVWXZ"
	userCodeLen      = 8
)

// newUserCode returns a user code in the form XXXX-XXXX.
func newUserCode() string {
	var b strings.Builder
	n := big.NewInt(int64(len(userCodeAlphabet)))
	for i := 0; i < userCodeLen; i++ {
		if i == userCodeLen/2 {
			b.WriteByte('-')
		}
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b.WriteByte(userCodeAlphabet[k.Int64()])
	}
	return b.String()
}

// normalUserCode is the form a user code is hashed in: upper case, only
// the alphabet's letters, so "bcdf-ghjk", "BCDF GHJK" and "BCDFGHJK" are
// one code. It returns "" when the input cannot be a user code.
func normalUserCode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case strings.ContainsRune(userCodeAlphabet, r):
			b.WriteRune(r)
		case r == '-' || r == ' ':
		default:
			return ""
		}
	}
	if b.Len() != userCodeLen {
		return ""
	}
	return b.String()
}

// displayUserCode writes a normal user code with its dash.
func displayUserCode(s string) string { return s[:userCodeLen/2] + "-" + s[userCodeLen/2:] }

// deviceClientAllowed reports whether cl may use the device grant: only
// the built-in CLI client. A registered application asking a person to
// type a code on chartctl's page would be a phishing tool; the CLI is the
// one client that runs where no browser is.
func deviceClientAllowed(cl *chartctl.OAuthClient) bool { return cl.ID == BuiltinClientID }

// deviceAuthorizationResponse is the RFC 8628 §3.2 body.
type deviceAuthorizationResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// handleDeviceAuthorization starts a device authorization: a device code
// for the client to poll with and a user code for the person to enter.
func (p *Provider) handleDeviceAuthorization(c echo.Context) error {
	form, oe := readForm(c)
	if oe != nil {
		return writeOAuthError(c, oe)
	}
	ctx := c.Request().Context()
	cl, oe := p.authenticateClient(ctx, c.Request(), form)
	if oe != nil {
		return writeOAuthError(c, oe)
	}
	if !deviceClientAllowed(cl) {
		return writeOAuthError(c, errf("unauthorized_client", "This client may not use the device authorization grant; only the chartctl CLI (client_id %s) may.", BuiltinClientID))
	}
	scope := strings.TrimSpace(form.Get("scope"))
	if scope == "" {
		return writeOAuthError(c, errf("invalid_scope", "scope is required: ask for one or more of %s.", chartctl.Scopes(chartctl.AllScopes).String()))
	}
	scopes, err := chartctl.NewScopes("scope", strings.Fields(scope))
	if err != nil {
		return writeOAuthError(c, errf("invalid_scope", "%s", chartctl.ErrorMessage(err)))
	}
	now := p.opts.Now().UTC()
	// A user code collides with a live one about once in 10^10 tries;
	// a few attempts make a refusal practically impossible.
	for range 5 {
		dc, dcHash := token.New(deviceCodePrefix)
		uc := newUserCode()
		err = p.opts.OAuth.CreateDeviceAuthorization(ctx, &chartctl.DeviceAuthorization{
			DeviceCodeHash: dcHash, UserCodeHash: token.Hash(normalUserCode(uc)), ClientID: cl.ID, Scopes: scopes,
			Interval: DeviceInterval, CreatedAt: now, ExpiresAt: now.Add(DeviceCodeTTL), Status: chartctl.DevicePending,
		})
		if chartctl.ErrorCode(err) == chartctl.ECONFLICT {
			continue
		}
		if err != nil {
			break
		}
		verify := p.issuer(c) + "/device"
		return writeNoStore(c, http.StatusOK, deviceAuthorizationResponse{
			DeviceCode: dc, UserCode: uc, VerificationURI: verify,
			VerificationURIComplete: verify + "?" + url.Values{"user_code": {uc}}.Encode(),
			ExpiresIn:               int(DeviceCodeTTL.Seconds()), Interval: int(DeviceInterval.Seconds()),
		})
	}
	p.opts.Logger.Error("create device authorization", "err", err)
	return writeOAuthError(c, errf("server_error", "The device code could not be issued; try again."))
}

// pollDevice is the token endpoint's device_code grant (RFC 8628 §3.4):
// the tokens once the person approved, else the §3.5 error that tells
// the client what to do.
func (p *Provider) pollDevice(c echo.Context, cl *chartctl.OAuthClient, form url.Values) error {
	if !deviceClientAllowed(cl) {
		return writeOAuthError(c, errf("unauthorized_client", "This client may not use the device authorization grant."))
	}
	dc := form.Get("device_code")
	if dc == "" {
		return writeOAuthError(c, errf("invalid_request", "device_code is required."))
	}
	invalid := errf("invalid_grant", "The device code is invalid or was issued to another client. Start the sign-in again.")
	if !token.Valid(deviceCodePrefix, dc) {
		return writeOAuthError(c, invalid)
	}
	now := p.opts.Now()
	var resp *tokenResponse
	err := p.opts.OAuth.PollDeviceAuthorization(c.Request().Context(), token.Hash(dc), now, func(d *chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error) {
		switch {
		case d.ClientID != cl.ID:
			return nil, invalid
		case d.Expired(now):
			return nil, errf("expired_token", "The device code expired before it was approved. Start the sign-in again.")
		case d.LastPolledAt != nil && now.Sub(*d.LastPolledAt) < d.Interval:
			// Polling too fast: the interval grows for this and every
			// later poll (RFC 8628 §3.5), and the store keeps it.
			d.Interval += deviceSlowDown
			return nil, errf("slow_down", "Polling too fast; wait %d seconds between requests.", int(d.Interval.Seconds()))
		case d.Status == chartctl.DeviceDenied:
			return nil, errf("access_denied", "The request was denied in the browser.")
		case d.Status != chartctl.DeviceApproved:
			return nil, errf("authorization_pending", "Waiting for the code to be entered and approved in a browser.")
		}
		var recs []*chartctl.OAuthToken
		resp, recs = p.mint(cl, d.UserID, d.GrantID, "", d.Scopes)
		return recs, nil
	})
	return p.finish(c, resp, err, "This device code was already used. Start the sign-in again.", invalid)
}

// handleDevice is the verification page: the code form, or, with a
// user_code (typed in, or from verification_uri_complete), the consent
// page for the device's request. Visitors sign in first.
func (p *Provider) handleDevice(c echo.Context) error {
	code := c.QueryParam("user_code")
	u, s := p.opts.Dashboard.Session(c)
	if u == nil {
		back := "/device"
		if code != "" {
			back += "?" + url.Values{"user_code": {code}}.Encode()
		}
		return c.Redirect(http.StatusFound, web.SignInURL(back))
	}
	if code == "" {
		return p.opts.Dashboard.RenderDevice(c, http.StatusOK, u, s, web.DevicePage{})
	}
	d, status, msg := p.lookupUserCode(c, u, code)
	if d == nil {
		if status == http.StatusTooManyRequests {
			return p.opts.Dashboard.DeviceThrottled(c, u, s)
		}
		return p.opts.Dashboard.RenderDevice(c, status, u, s, web.DevicePage{UserCode: code, Error: msg})
	}
	cl, err := p.client(c.Request().Context(), d.ClientID)
	if err != nil {
		p.opts.Logger.Error("load oauth client", "err", err)
		return p.opts.Dashboard.RenderError(c, http.StatusInternalServerError, "Something went wrong", "The application could not be loaded. Try again later.")
	}
	scopes := grantable(d.Scopes, u)
	if len(scopes) == 0 {
		return p.opts.Dashboard.RenderDevice(c, http.StatusForbidden, u, s, web.DevicePage{UserCode: code, Error: errNoGrantableScope.Description})
	}
	uc := displayUserCode(normalUserCode(code))
	return p.opts.Dashboard.RenderConsent(c, u, s, web.ConsentPage{
		ClientName: cl.Name, Scopes: web.ScopeItems(scopes), Action: "/device",
		Admin: scopes.Allows(chartctl.ScopeAdmin), KeysOutlive: scopes.Allows(chartctl.ScopeKeysWrite),
		Params:   []web.Param{{Name: "user_code", Value: uc}},
		ReturnTo: "/device?" + url.Values{"user_code": {uc}}.Encode(), UserCode: uc,
	})
}

// lookupUserCode finds the live request of a typed user code under the
// device code throttle. It returns the request, or nil with the status
// and message to show.
func (p *Provider) lookupUserCode(c echo.Context, u *chartctl.User, code string) (*chartctl.DeviceAuthorization, int, string) {
	blocked, fail, done := p.opts.Dashboard.DeviceCodeAttempt(c, u)
	defer done()
	if blocked {
		return nil, http.StatusTooManyRequests, ""
	}
	wrong := "That code is not valid or has expired. Check the code your device shows, or start the sign-in again there."
	norm := normalUserCode(code)
	if norm == "" {
		fail()
		return nil, http.StatusBadRequest, wrong
	}
	d, err := p.opts.OAuth.DeviceAuthorizationByUserCode(c.Request().Context(), token.Hash(norm), p.opts.Now())
	switch {
	case chartctl.ErrorCode(err) == chartctl.ENOTFOUND:
		fail()
		return nil, http.StatusBadRequest, wrong
	case err != nil:
		p.opts.Logger.Error("load device authorization", "err", err)
		return nil, http.StatusServiceUnavailable, "The code could not be checked right now. Try again in a moment."
	case d.Status != chartctl.DevicePending:
		return nil, http.StatusConflict, "This code was already used. Start the sign-in again on your device."
	}
	return d, 0, ""
}

// handleDeviceDecision takes the consent form of a device request:
// approve records the user and the scopes the device's tokens get, deny
// makes the device's next poll answer access_denied.
func (p *Provider) handleDeviceDecision(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return p.opts.Dashboard.RenderError(c, http.StatusBadRequest, "Invalid request", "The form could not be read.")
	}
	if err := p.opts.Dashboard.CheckCSRF(c); err != nil {
		return p.opts.Dashboard.RenderError(c, http.StatusForbidden, "Request refused", chartctl.ErrorMessage(err))
	}
	code := form.Get("user_code")
	u, s := p.opts.Dashboard.Session(c)
	if u == nil {
		return c.Redirect(http.StatusSeeOther, web.SignInURL("/device?"+url.Values{"user_code": {code}}.Encode()))
	}
	blocked, fail, done := p.opts.Dashboard.DeviceCodeAttempt(c, u)
	defer done()
	if blocked {
		return p.opts.Dashboard.DeviceThrottled(c, u, s)
	}
	norm := normalUserCode(code)
	approve := form.Get("decision") == "approve"
	errNoScope := errors.New("no grantable scope")
	err = p.opts.OAuth.DecideDeviceAuthorization(c.Request().Context(), token.Hash(norm), p.opts.Now(), func(d *chartctl.DeviceAuthorization) error {
		d.UserID = u.ID
		if !approve {
			d.Status = chartctl.DeviceDenied
			return nil
		}
		scopes := grantable(d.Scopes, u)
		if len(scopes) == 0 {
			return errNoScope
		}
		d.Status, d.Scopes, d.GrantID = chartctl.DeviceApproved, scopes, newGrantID()
		return nil
	})
	switch {
	case errors.Is(err, errNoScope):
		return p.opts.Dashboard.RenderDevice(c, http.StatusForbidden, u, s, web.DevicePage{UserCode: code, Error: errNoGrantableScope.Description})
	case chartctl.ErrorCode(err) == chartctl.ENOTFOUND || norm == "":
		fail()
		return p.opts.Dashboard.RenderDevice(c, http.StatusBadRequest, u, s, web.DevicePage{UserCode: code,
			Error: "That code is not valid or has expired. Check the code your device shows, or start the sign-in again there."})
	case chartctl.ErrorCode(err) == chartctl.ECONFLICT:
		return p.opts.Dashboard.RenderDevice(c, http.StatusConflict, u, s, web.DevicePage{UserCode: code,
			Error: "This code was already used. Start the sign-in again on your device."})
	case err != nil:
		p.opts.Logger.Error("decide device authorization", "err", err)
		return p.opts.Dashboard.RenderError(c, http.StatusServiceUnavailable, "Something went wrong", "Your answer could not be recorded. Try again in a moment.")
	}
	if !approve {
		return p.opts.Dashboard.RenderDevice(c, http.StatusOK, u, s, web.DevicePage{Done: "Request denied",
			Message: "The device was not given access. You can close this page."})
	}
	return p.opts.Dashboard.RenderDevice(c, http.StatusOK, u, s, web.DevicePage{Done: "Device connected",
		Message: "Your device is now signed in as " + u.Email + ". Return to it; you can close this page."})
}
