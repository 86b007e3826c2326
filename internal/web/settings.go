package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the Account Settings pages for one's own credentials
// beyond API keys: the password (/settings/password) and the OAuth
// applications one has authorized (/settings/apps). What they change is
// decided in internal/app (ChangePassword, RevokeAuthorizedApp), as for
// every other write of the dashboard.

// PasswordPage is the content of the Password tab.
type PasswordPage struct {
	// HasPassword is false for an account that signs in another way: it
	// has no password to change.
	HasPassword bool
	Error       string
	// ErrorField is the id of the field the error is about, for
	// aria-describedby and focus.
	ErrorField string
}

func (d *Dashboard) handlePasswordPage(c echo.Context) error {
	u, _ := d.Session(c)
	p := d.page(c, "Password", "settings", "password", PasswordPage{HasPassword: u.PasswordHash != ""})
	if c.QueryParam("changed") == "1" {
		p.Flash = "Your password was changed. Every other browser signed in as you was signed out."
	}
	return d.render(c, http.StatusOK, "password", p)
}

func (d *Dashboard) handleChangePassword(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	u, s := d.Session(c)
	pp := PasswordPage{HasPassword: u.PasswordHash != ""}
	fail := func(status int, field, msg string) error {
		pp.Error, pp.ErrorField = msg, field
		return d.render(c, status, "password", d.page(c, "Password", "settings", "password", pp))
	}
	if !pp.HasPassword {
		return fail(http.StatusForbidden, "", "This account has no password to change: it signs in another way.")
	}
	current, next, confirm := c.FormValue("current_password"), c.FormValue("new_password"), c.FormValue("confirm_password")
	// Checking the current password is a sign-in attempt: it counts in the
	// sign-in throttles, and the two keyed by address (per address, per
	// account and address) stop it, so a stolen session cannot be used to
	// guess the password. The per-account count never refuses (finding
	// N10: failures from elsewhere must not lock the owner out).
	ip := d.opts.ClientIP(c.Request())
	defer d.attempts.lock("ip:" + ip)()
	if d.addressBlocked(ip, u.Email) {
		return fail(http.StatusTooManyRequests, "current-password", "Too many failed attempts. Wait a few minutes and try again.")
	}
	if current == "" {
		return fail(http.StatusBadRequest, "current-password", "Enter your current password.")
	}
	if next != confirm {
		return fail(http.StatusBadRequest, "confirm-password", "The new password and its confirmation differ; type the same password twice.")
	}
	err := d.opts.App.ChangePassword(c.Request().Context(), u, current, next, s.Hash)
	switch {
	case err == app.ErrWrongPassword:
		d.countFailure(ip, u.Email)
		return fail(http.StatusBadRequest, "current-password", chartctl.ErrorMessage(err))
	case chartctl.ErrorCode(err) == chartctl.EINVALID:
		return fail(http.StatusBadRequest, "new-password", chartctl.ErrorMessage(err))
	case chartctl.ErrorCode(err) == chartctl.EFORBIDDEN:
		return fail(http.StatusForbidden, "", chartctl.ErrorMessage(err))
	case err != nil:
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/settings/password?changed=1")
}

// AppsPage is the content of the Authorized apps tab.
type AppsPage struct {
	Apps []AppRow
}

// AppRow is one authorized OAuth application.
type AppRow struct {
	// GrantID names the authorization; the Revoke button posts it.
	GrantID string
	Name    string
	Scopes  []string
	// AuthorizedAt is when it was authorized, LastUsedAt when it last
	// obtained a token, ExpiresAt when its access ends unless refreshed.
	AuthorizedAt time.Time
	LastUsedAt   time.Time
	ExpiresAt    time.Time
}

func appRow(a app.AuthorizedApp) AppRow {
	name := a.Grant.ClientID
	if a.Client != nil && a.Client.Name != "" {
		name = a.Client.Name
	}
	return AppRow{GrantID: a.Grant.ID, Name: name, Scopes: a.Grant.Scopes.Strings(),
		AuthorizedAt: a.Grant.CreatedAt, LastUsedAt: a.Grant.RefreshedAt, ExpiresAt: a.Grant.ExpiresAt}
}

func (d *Dashboard) handleApps(c echo.Context) error {
	u, _ := d.Session(c)
	apps, err := d.opts.App.AuthorizedApps(c.Request().Context(), u)
	if err != nil {
		return err
	}
	ap := AppsPage{Apps: make([]AppRow, 0, len(apps))}
	for _, a := range apps {
		ap.Apps = append(ap.Apps, appRow(a))
	}
	p := d.page(c, "Authorized apps", "settings", "apps", ap)
	if c.QueryParam("revoked") == "1" {
		// A fixed notice: a name taken from the address would let a link
		// put words on this page.
		p.Flash = "Access was revoked: the application's tokens no longer work."
	}
	return d.render(c, http.StatusOK, "apps", p)
}

func (d *Dashboard) handleRevokeApp(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	u, _ := d.Session(c)
	_, err := d.opts.App.RevokeAuthorizedApp(c.Request().Context(), u, c.Param("id"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.RenderError(c, http.StatusNotFound, "Application not found", "This application is not authorized on your account, or its access was already revoked.")
	} else if err != nil {
		return err
	}
	d.opts.Principals.InvalidateCredentials()
	return c.Redirect(http.StatusSeeOther, "/settings/apps?revoked=1")
}
