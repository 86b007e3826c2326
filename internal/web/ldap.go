package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
)

// This file holds sign-in with a directory login (LDAP) on the password
// form: the throttles of handleSignIn have already run, so no bind
// happens for a refused address (CONTRACT §18 decision 6).

// PasswordProvider checks a login and password at an identity provider
// (an *ldap.Provider).
type PasswordProvider interface {
	// Authenticate returns the person; identity.ErrUnknownUser,
	// identity.ErrWrongPassword, or an error wrapping
	// identity.ErrUnavailable refuse.
	Authenticate(ctx context.Context, login, password string) (*identity.Claims, error)
	// Exists reports whether the account subject is still there.
	Exists(ctx context.Context, subject string) (bool, error)
}

// LDAPOptions configure sign-in with a directory login.
type LDAPOptions struct {
	// Provider is the directory; nil offers none.
	Provider PasswordProvider
	// Policy is what a sign-in does to admins (--ldap-admin-group).
	Policy app.SignInPolicy
}

// ldapUnavailable is the sign-in page's message when the directory
// cannot be asked.
const ldapUnavailable = "chartctl cannot reach the company directory (LDAP) to check your password right now. Try again in a few minutes; if it keeps happening, tell your chartctl administrator."

// ldapSignIn signs in login through the directory. u is the chartctl
// user whose email is login, if any (not one with a local password:
// those never reach the directory). The caller holds the address's lock.
func (d *Dashboard) ldapSignIn(c echo.Context, sp SignInPage, ip, key, login, password string, u *chartctl.User) error {
	ctx := c.Request().Context()
	fail := func() error {
		d.countFailure(ip, key)
		d.auditSignIn(c, key, nil, chartctl.OutcomeFailed)
		sp.Error = d.signInError(c)
		return d.renderSignIn(c, http.StatusUnauthorized, sp)
	}
	claims, err := d.opts.LDAP.Provider.Authenticate(ctx, login, password)
	switch {
	case errors.Is(err, identity.ErrUnavailable):
		// Not the person's failure: nothing counts in the throttles, and
		// no password is tried anywhere else (an LDAP user has none).
		d.opts.Logger.Error("LDAP sign-in: directory unavailable", "err", err)
		d.auditSignIn(c, key, nil, chartctl.OutcomeFailed)
		sp.Error = ldapUnavailable
		return d.renderSignIn(c, http.StatusServiceUnavailable, sp)
	case errors.Is(err, identity.ErrUnknownUser):
		// A directory account that is gone is disabled at this attempt
		// (CONTRACT §18), which ends its keys. Only a login that is the
		// account's email names it here; the periodic check finds the
		// others (app.CheckDirectoryUsers).
		if u != nil && u.Identity.Provider == chartctl.ProviderLDAP && !u.Disabled {
			d.disableIfGone(ctx, u)
		}
		return fail()
	case errors.Is(err, identity.ErrWrongPassword):
		return fail()
	case err != nil:
		d.opts.Logger.Warn("LDAP sign-in refused", "err", err)
		return fail()
	}
	nu, err := d.opts.App.SignInExternal(ctx, claims, d.opts.LDAP.Policy)
	var conflict *app.LinkConflict
	switch {
	case errors.As(err, &conflict):
		d.auditSignIn(c, conflict.Email, nil, chartctl.OutcomeFailed)
		return d.renderError(c, http.StatusConflict, nil, nil, ErrorPage{Heading: "This account cannot be linked", Message: conflict.Error(), Back: "/signin"})
	case chartctl.ErrorCode(err) == chartctl.EFORBIDDEN || chartctl.ErrorCode(err) == chartctl.EINVALID:
		d.countFailure(ip, key)
		d.auditSignIn(c, key, nil, chartctl.OutcomeFailed)
		sp.Error = chartctl.ErrorMessage(err)
		return d.renderSignIn(c, http.StatusForbidden, sp)
	case err != nil:
		return err
	}
	if err := d.startSession(c, nu); err != nil {
		return err
	}
	d.auditSignIn(c, nu.Email, nu, chartctl.OutcomeSuccess)
	if err := d.opts.Store.TouchUser(ctx, nu.ID, d.opts.Now()); err != nil {
		d.opts.Logger.Warn("record sign-in time", "err", err)
	}
	return c.Redirect(http.StatusSeeOther, sp.ReturnTo)
}

// disableIfGone disables u when the directory confirms their entry is
// gone. The login not matching the user filter is not enough: with
// (uid=%s), anyone typing u's email would otherwise disable u.
func (d *Dashboard) disableIfGone(ctx context.Context, u *chartctl.User) {
	found, err := d.opts.LDAP.Provider.Exists(ctx, u.Identity.Subject)
	if err != nil || found {
		if err != nil {
			d.opts.Logger.Warn("check whether the directory still has a user", "user", u.Email, "err", err)
		}
		return
	}
	if err := d.opts.App.DisableGoneUser(ctx, u); err != nil {
		d.opts.Logger.Error("disable a user the directory no longer has", "user", u.Email, "err", err)
		return
	}
	d.opts.Principals.InvalidateCredentials()
}
