package web

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
	"github.com/chartctl/chartctl/internal/identity/oidc"
)

// This file holds sign-in through an identity provider: /signin/oidc sends
// the browser to the provider, /signin/oidc/callback brings it back. What a
// sign-in does to chartctl's users is app.SignInExternal's decision.

// SSO is the identity provider the sign-in page offers (an *oidc.Provider).
type SSO interface {
	// AuthCodeURL is where to send the browser for the sign-in r.
	AuthCodeURL(r oidc.Request) string
	// Finish exchanges the provider's code for the sign-in r and returns
	// the verified person; refusals wrap oidc.ErrRefused.
	Finish(ctx context.Context, r oidc.Request, code string) (*identity.Claims, error)
}

// SSOOptions configure sign-in through an identity provider.
type SSOOptions struct {
	// Provider is the identity provider; nil offers none.
	Provider SSO
	// Name labels the button: "Sign in with <Name>".
	Name string
	// Key encrypts the sign-in in progress into a cookie, so that any
	// replica can finish it (CONTRACT §18 decision 22): every replica
	// must have the same (derived from the client secret).
	Key []byte
	// Policy is what a sign-in does to admins.
	Policy app.SignInPolicy
}

// OIDCStateCookie holds the sign-in in progress (state, nonce, PKCE
// verifier, return address), encrypted, for ten minutes.
const OIDCStateCookie = "chartctl_oidc"

// oidcStateTTL bounds how long a person may take at the provider.
const oidcStateTTL = 10 * time.Minute

type oidcState struct {
	oidc.Request
	ReturnTo  string    `json:"return_to"`
	ExpiresAt time.Time `json:"expires_at"`
}

// SSOKey derives the state cookie's key from the client secret, which
// every replica has.
func SSOKey(clientSecret string) []byte {
	k := sha256.Sum256([]byte("chartctl oidc sign-in state\x00" + clientSecret))
	return k[:]
}

func (d *Dashboard) sealState(st oidcState) (string, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	aead, err := d.stateAEAD()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, b, []byte(OIDCStateCookie))), nil
}

func (d *Dashboard) openState(v string) (*oidcState, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, err
	}
	aead, err := d.stateAEAD()
	if err != nil {
		return nil, err
	}
	if len(b) < aead.NonceSize() {
		return nil, errors.New("short state")
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(OIDCStateCookie))
	if err != nil {
		return nil, err
	}
	var st oidcState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func (d *Dashboard) stateAEAD() (cipher.AEAD, error) {
	block, err := aes.NewCipher(d.opts.SSO.Key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// handleOIDCStart sends the browser to the identity provider.
func (d *Dashboard) handleOIDCStart(c echo.Context) error {
	if d.opts.SSO.Provider == nil {
		return d.NotFoundPage(c)
	}
	r := oidc.NewRequest()
	v, err := d.sealState(oidcState{Request: r, ReturnTo: safeReturnTo(c.QueryParam("return_to")), ExpiresAt: d.opts.Now().Add(oidcStateTTL)})
	if err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{
		Name: OIDCStateCookie, Value: v, Path: "/signin/oidc", MaxAge: int(oidcStateTTL.Seconds()),
		// Lax: the provider's redirect back is a top-level GET.
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: d.secure(c),
	})
	return c.Redirect(http.StatusFound, d.opts.SSO.Provider.AuthCodeURL(r))
}

// handleOIDCCallback finishes a sign-in: the state must be this browser's,
// the ID token valid, and the account one chartctl may sign in.
func (d *Dashboard) handleOIDCCallback(c echo.Context) error {
	if d.opts.SSO.Provider == nil {
		return d.NotFoundPage(c)
	}
	ip := d.opts.ClientIP(c.Request())
	// Refused callbacks count in the address's sign-in throttle, as wrong
	// passwords do, so the endpoint cannot be used to try codes.
	defer d.attempts.lock("ip:" + ip)()
	if blocked, _ := d.byIP.Blocked(ip); blocked {
		return d.renderSignIn(c, http.StatusTooManyRequests, SignInPage{Error: "Too many failed sign-in attempts. Wait a few minutes and try again."})
	}
	refuse := func(status int, msg string) error {
		d.byIP.Fail(ip)
		d.auditSignIn(c, "", nil, chartctl.OutcomeFailed)
		return d.renderSignIn(c, status, SignInPage{Error: msg})
	}
	ck, err := c.Cookie(OIDCStateCookie)
	// The state is single use: gone from this browser whatever happens.
	c.SetCookie(&http.Cookie{Name: OIDCStateCookie, Value: "", Path: "/signin/oidc", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: d.secure(c)})
	if err != nil {
		return refuse(http.StatusBadRequest, "This sign-in was not started in this browser, or took too long. Sign in again.")
	}
	st, err := d.openState(ck.Value)
	if err != nil || d.opts.Now().After(st.ExpiresAt) {
		return refuse(http.StatusBadRequest, "This sign-in was not started in this browser, or took too long. Sign in again.")
	}
	if q := c.QueryParam("state"); q == "" || q != st.State {
		return refuse(http.StatusBadRequest, "This sign-in's state does not match the one this browser started. Sign in again.")
	}
	if e := c.QueryParam("error"); e != "" {
		msg := "The identity provider did not sign you in (" + e + ")."
		if desc := c.QueryParam("error_description"); desc != "" {
			msg = "The identity provider did not sign you in: " + desc
		}
		return refuse(http.StatusUnauthorized, msg)
	}
	code := c.QueryParam("code")
	if code == "" {
		return refuse(http.StatusBadRequest, "The identity provider sent no sign-in code. Sign in again.")
	}
	claims, err := d.opts.SSO.Provider.Finish(c.Request().Context(), st.Request, code)
	var r *oidc.Refusal
	if errors.As(err, &r) {
		d.opts.Logger.Warn("identity provider sign-in refused", "err", err)
		return refuse(http.StatusUnauthorized, "Sign-in refused. "+r.Reason)
	} else if err != nil {
		return err
	}
	u, err := d.opts.App.SignInExternal(c.Request().Context(), claims, d.opts.SSO.Policy)
	var conflict *app.LinkConflict
	switch {
	case errors.As(err, &conflict):
		d.auditSignIn(c, conflict.Email, nil, chartctl.OutcomeFailed)
		return d.renderError(c, http.StatusConflict, nil, nil, ErrorPage{Heading: "This account cannot be linked", Message: conflict.Error(), Back: "/signin"})
	case chartctl.ErrorCode(err) == chartctl.EFORBIDDEN || chartctl.ErrorCode(err) == chartctl.EINVALID:
		return refuse(http.StatusForbidden, chartctl.ErrorMessage(err))
	case err != nil:
		return err
	}
	if err := d.startSession(c, u); err != nil {
		return err
	}
	d.auditSignIn(c, u.Email, u, chartctl.OutcomeSuccess)
	if err := d.opts.Store.TouchUser(c.Request().Context(), u.ID, d.opts.Now()); err != nil {
		d.opts.Logger.Warn("record sign-in time", "err", err)
	}
	return c.Redirect(http.StatusSeeOther, st.ReturnTo)
}
