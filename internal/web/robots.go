package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/text"
)

// This file holds a robot account's page (CONTRACT §18 "Access"):
// /organizations/:org/robots/:name shows its patterns, permissions,
// creator, last use, expiry and trusted publishers to the maintainers and
// owners of the organization; owners also get Disable/Enable, Rotate (the
// new secret shown once) and Delete (after a confirmation page). The
// application layer decides who may see and change what; the pages only
// turn its refusals into error pages.

// RobotPage is a robot account's page.
type RobotPage struct {
	Robot *chartctl.Robot
	// CreatedBy is the creator's email, "" once that account is gone.
	CreatedBy string
	// Expired is set once the robot's expiry has passed.
	Expired bool
	// Publishers are its trusted publishers, shown when PublishersNote is
	// "" (it otherwise says why they are not).
	Publishers     []*chartctl.TrustedPublisher
	PublishersNote string
	// CanManage is set for owners of the organization and server admins.
	CanManage bool
	// Graces are the choices of the rotate form.
	Graces []GraceOption
	// Error is shown above the management forms.
	Error string
}

// GraceOption is a choice of how long a replaced robot secret keeps
// working.
type GraceOption struct {
	Value, Label string
}

// graceChoices are the rotate form's choices, within app.MaxRobotGrace.
var graceChoices = []GraceOption{
	{"0s", "At once"},
	{"1h", "After 1 hour"},
	{"24h", "After 1 day"},
	{"7d", "After 7 days"},
}

// RobotSecretPage shows a robot's new secret once, after a rotation.
type RobotSecretPage struct {
	Robot  *chartctl.Robot
	Secret string
	// OldUntil is when the replaced secret stops working, nil when it
	// already has.
	OldUntil *time.Time
	BaseURL  string
}

// refuseApp answers a refusal of the application layer: what the viewer
// may not see is the 404 page, what they may see but not do the 403 page
// with the application's reason.
func (d *Dashboard) refuseApp(c echo.Context, err error) error {
	switch chartctl.ErrorCode(err) {
	case chartctl.ENOTFOUND:
		return d.notFound(c)
	case chartctl.EFORBIDDEN, chartctl.EUNAUTHORIZED:
		return d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(err))
	case chartctl.EINVALID:
		return d.RenderError(c, http.StatusBadRequest, "Not possible", chartctl.ErrorMessage(err))
	case chartctl.EUNAVAILABLE:
		return d.RenderError(c, http.StatusServiceUnavailable, "Not available", chartctl.ErrorMessage(err))
	}
	return err
}

// flushUsage asks the server to write the last-used times it batches, so
// a page shows a robot's latest use; servers without the batch (test
// stand-ins) have nothing to write.
func (d *Dashboard) flushUsage() {
	if f, ok := d.opts.Principals.(interface{ FlushUsage() }); ok {
		f.FlushUsage()
	}
}

// robotURL is the address of robot name of org's page.
func robotURL(org, name string) string {
	return "/organizations/" + url.PathEscape(org) + "/robots/" + url.PathEscape(name)
}

// loadRobotPage reads the robot of the route and everything its page
// shows, as the viewer may see it.
func (d *Dashboard) loadRobotPage(c echo.Context) (*chartctl.Principal, *RobotPage, error) {
	p, err := d.viewer(c)
	if err != nil {
		return nil, nil, err
	}
	ctx := c.Request().Context()
	d.flushUsage()
	r, err := d.opts.App.Robot(ctx, p, c.Param("org"), c.Param("name"))
	if err != nil {
		return nil, nil, err
	}
	rp := &RobotPage{Robot: r, CreatedBy: d.opts.App.RobotCreator(ctx, r), Expired: r.Expired(d.opts.Now()), Graces: graceChoices}
	rp.CanManage = d.opts.App.MayManageRobots(ctx, p, r.Organization) == nil
	switch pubs, err := d.opts.App.Publishers(ctx, p, r.Organization, r.Name); {
	case err == nil:
		rp.Publishers = pubs
	case hidden(err):
		rp.PublishersNote = chartctl.ErrorMessage(err)
	default:
		return nil, nil, err
	}
	return p, rp, nil
}

func (d *Dashboard) renderRobot(c echo.Context, status int, rp *RobotPage) error {
	pg := d.page(c, rp.Robot.Name+" · "+rp.Robot.Organization, "", "", rp)
	switch c.QueryParam("done") {
	case "disabled":
		if rp.Robot.Disabled {
			pg.Flash = "The robot account was disabled: its secret and the credentials exchanged for it stop working at once."
		}
	case "enabled":
		if !rp.Robot.Disabled {
			pg.Flash = "The robot account was enabled: its secret works again."
		}
	}
	return d.render(c, status, "robot", pg)
}

func (d *Dashboard) handleRobot(c echo.Context) error {
	_, rp, err := d.loadRobotPage(c)
	if err != nil {
		return d.refuseApp(c, err)
	}
	return d.renderRobot(c, http.StatusOK, rp)
}

// handleSetRobotDisabled serves the Disable and Enable buttons.
func (d *Dashboard) handleSetRobotDisabled(disabled bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := d.CheckCSRF(c); err != nil {
			return d.refuseCSRF(c, err)
		}
		p, err := d.viewer(c)
		if err != nil {
			return err
		}
		r, err := d.opts.App.UpdateRobot(c.Request().Context(), p, c.Param("org"), c.Param("name"), app.RobotChanges{Disabled: &disabled})
		if err != nil {
			return d.refuseApp(c, err)
		}
		// Principals are cached with credentials: a disabled robot stops
		// at once, as through /v1.
		d.opts.Principals.InvalidateCredentials()
		done := "enabled"
		if disabled {
			done = "disabled"
		}
		return c.Redirect(http.StatusSeeOther, robotURL(r.Organization, r.Name)+"?done="+done)
	}
}

func (d *Dashboard) handleRotateRobot(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, rp, err := d.loadRobotPage(c)
	if err != nil {
		return d.refuseApp(c, err)
	}
	grace, err := text.ParseDuration(c.FormValue("grace"))
	if c.FormValue("grace") == "" {
		grace, err = 0, nil
	}
	if err != nil {
		rp.Error = "Choose when the old secret stops working: at once, or after up to 7 days."
		return d.renderRobot(c, http.StatusBadRequest, rp)
	}
	r, secret, err := d.opts.App.RotateRobot(c.Request().Context(), p, rp.Robot.Organization, rp.Robot.Name, grace)
	if chartctl.ErrorCode(err) == chartctl.EINVALID {
		rp.Error = chartctl.ErrorMessage(err)
		return d.renderRobot(c, http.StatusBadRequest, rp)
	} else if err != nil {
		return d.refuseApp(c, err)
	}
	d.opts.Principals.InvalidateCredentials()
	sp := RobotSecretPage{Robot: r, Secret: secret, OldUntil: r.PreviousSecretExpiresAt, BaseURL: d.BaseURL(c)}
	return d.render(c, http.StatusOK, "robot_secret", d.page(c, "New secret of "+r.Name, "", "", sp))
}

func (d *Dashboard) handleDeleteRobotPage(c echo.Context) error {
	p, rp, err := d.loadRobotPage(c)
	if err != nil {
		return d.refuseApp(c, err)
	}
	if err := d.opts.App.MayManageRobots(c.Request().Context(), p, rp.Robot.Organization); err != nil {
		return d.refuseApp(c, err)
	}
	return d.render(c, http.StatusOK, "robot_delete", d.page(c, "Delete robot account "+rp.Robot.Name, "", "", rp))
}

func (d *Dashboard) handleDeleteRobot(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, err := d.viewer(c)
	if err != nil {
		return err
	}
	r, err := d.opts.App.DeleteRobot(c.Request().Context(), p, c.Param("org"), c.Param("name"))
	if err != nil {
		return d.refuseApp(c, err)
	}
	d.opts.Principals.InvalidateCredentials()
	return c.Redirect(http.StatusSeeOther, "/organizations/"+url.PathEscape(r.Organization)+"?"+url.Values{"robot_deleted": {r.Name}}.Encode())
}
