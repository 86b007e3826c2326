package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// DevicePage is the content of the device verification page (/device,
// RFC 8628): the form that takes a user code, or the outcome once the
// person answered.
type DevicePage struct {
	// UserCode fills the form again after a wrong code.
	UserCode string
	// Error says why the code was not accepted.
	Error string
	// Done is the outcome's heading, Message its text; set, the page
	// shows them instead of the form.
	Done, Message string
}

// RenderDevice writes the device page for the signed-in user u.
func (d *Dashboard) RenderDevice(c echo.Context, status int, u *chartctl.User, s *chartctl.WebSession, dp DevicePage) error {
	return d.render(c, status, "device", Page{Title: "Connect a device", User: u, CSRF: s.CSRFToken, Bare: true, Data: dp})
}

// DeviceCodeAttempt starts one attempt of user u at a device user code.
// It holds the address's lock until done is called, so parallel attempts
// from one address cannot all pass the check before the first failure
// counts (as sign-in does). blocked reports that the address or the user
// ran out of attempts; fail counts a wrong code for both. A user code
// holds about 34 bits, and each address and account gets the sign-in
// budget of failures (--signin-limit), so guessing one is hopeless.
func (d *Dashboard) DeviceCodeAttempt(c echo.Context, u *chartctl.User) (blocked bool, fail, done func()) {
	ip := d.opts.ClientIP(c.Request())
	done = d.attempts.lock("device:" + ip)
	byIP, _ := d.deviceByIP.Blocked(ip)
	byUser, _ := d.deviceByUser.Blocked(u.ID)
	fail = func() {
		d.deviceByIP.Fail(ip)
		d.deviceByUser.Fail(u.ID)
	}
	return byIP || byUser, fail, done
}

// DeviceThrottled is the page for a visitor out of device code attempts.
func (d *Dashboard) DeviceThrottled(c echo.Context, u *chartctl.User, s *chartctl.WebSession) error {
	return d.RenderDevice(c, http.StatusTooManyRequests, u, s, DevicePage{
		Error: "Too many wrong codes. Wait a few minutes, then enter the code your device shows again.",
	})
}
