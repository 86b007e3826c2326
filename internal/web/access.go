package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds a repository's Access tab (CONTRACT §18 "Access"):
// /repositories/:repo/access lists the repository's grants (teams and
// users, their role, since when), the robot accounts of its organization
// whose patterns name it, and their trusted publishers. Admins of the
// repository grant and revoke roles there. Each list is shown to whom
// the application layer shows it (grants: the repository's admins;
// robots: the organization's maintainers and owners; publishers: its
// owners) and otherwise replaced by the application's reason.

// AccessPage is a repository's Access tab.
type AccessPage struct {
	Repo *chartctl.Repository
	// Grants are shown when GrantsNote is "", which otherwise says why
	// they are not.
	Grants     []*chartctl.Grant
	GrantsNote string
	// CanGrant is set for the repository's admins: they get the grant form
	// and a Revoke button on each grant.
	CanGrant bool
	Roles    []chartctl.RepoRole
	// Teams are the organization's teams, offered by the grant form.
	Teams []*chartctl.Team
	// Robots are the organization's robots whose patterns name the
	// repository, shown when RobotsNote is "".
	Robots     []AccessRobot
	RobotsNote string
	// Kind, Name and Role refill the grant form after an error.
	Kind  chartctl.GrantKind
	Name  string
	Role  chartctl.RepoRole
	Error string

	// grantsErr is the application's refusal to list the grants, which
	// refuses changing them too.
	grantsErr error
}

// AccessRobot is a robot account on the Access tab, with its trusted
// publishers when the viewer may see them (PublishersNote says why not).
type AccessRobot struct {
	*chartctl.Robot
	Expired        bool
	Publishers     []*chartctl.TrustedPublisher
	PublishersNote string
}

// hidden reports whether err is the application refusing to show
// something the viewer may not see (as opposed to a failure).
func hidden(err error) bool {
	switch chartctl.ErrorCode(err) {
	case chartctl.EFORBIDDEN, chartctl.EUNAUTHORIZED, chartctl.ENOTFOUND:
		return true
	}
	return false
}

// accessPage loads the Access tab of the route's repository for the
// viewer. ok is false when the request was answered already: the 404 page
// for a repository the viewer may not see, the 403 page when the viewer
// may see none of the tab's lists.
func (d *Dashboard) accessPage(c echo.Context, ap AccessPage) (*chartctl.Principal, *AccessPage, bool, error) {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return nil, nil, false, err
	}
	ctx := c.Request().Context()
	ap.Repo, ap.Roles = r, chartctl.RepoRoles
	if ap.Role == "" {
		ap.Role = chartctl.RepoRoleRead
	}
	if ap.Kind == "" {
		// A personal repository takes no team grants.
		ap.Kind = chartctl.GrantTeam
		if r.Organization == "" {
			ap.Kind = chartctl.GrantUser
		}
	}
	_, grants, gerr := d.opts.App.Grants(ctx, p, r.Name)
	switch {
	case gerr == nil:
		ap.Grants = grants
		ap.CanGrant = true
	case hidden(gerr):
		ap.GrantsNote, ap.grantsErr = chartctl.ErrorMessage(gerr), gerr
	default:
		return nil, nil, false, gerr
	}
	if ap.CanGrant && r.Organization != "" {
		if ap.Teams, err = d.opts.Store.Teams(ctx, r.Organization); err != nil {
			return nil, nil, false, err
		}
	}
	var rerr error = chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q belongs to no organization, so no robot account acts on it.", r.Name)
	if r.Organization != "" {
		d.flushUsage()
		var robots []*chartctl.Robot
		robots, rerr = d.opts.App.Robots(ctx, p, r.Organization)
		if rerr != nil && !hidden(rerr) {
			return nil, nil, false, rerr
		}
		now := d.opts.Now()
		for _, rb := range robots {
			if !chartctl.MatchRepo(rb.Repositories, r.Name) {
				continue
			}
			ar := AccessRobot{Robot: rb, Expired: rb.Expired(now)}
			ar.Publishers, err = d.opts.App.Publishers(ctx, p, rb.Organization, rb.Name)
			if hidden(err) {
				ar.PublishersNote = chartctl.ErrorMessage(err)
			} else if err != nil {
				return nil, nil, false, err
			}
			ap.Robots = append(ap.Robots, ar)
		}
	}
	switch {
	case rerr == nil:
	case r.Organization != "" && chartctl.ErrorCode(rerr) == chartctl.ENOTFOUND:
		// The organization is not the viewer's to see (a user granted a
		// role here from outside it): "not found" would puzzle on its
		// own repository's page.
		ap.RobotsNote = "Only the maintainers and owners of organization " + r.Organization + " see its robot accounts."
	default:
		ap.RobotsNote = chartctl.ErrorMessage(rerr)
	}
	if gerr != nil && (r.Organization == "" || rerr != nil) {
		// Nothing on the tab is the viewer's to see: say why, as the
		// application puts it for the grants.
		return nil, nil, false, d.refuseApp(c, gerr)
	}
	return p, &ap, true, nil
}

func (d *Dashboard) renderAccess(c echo.Context, status int, ap *AccessPage) error {
	pg := d.page(c, "Access · "+ap.Repo.Name, "repos", "", ap)
	pg.Flash = accessFlash(c.QueryParam("done"), chartctl.GrantKind(c.QueryParam("kind")), c.QueryParam("name"), ap.Grants)
	return d.render(c, status, "repo_access", pg)
}

// accessFlash is the notice after a grant or a revocation (post,
// redirect, get). The query string is anyone's to write, so the notice
// shows only when the grants agree with it.
func accessFlash(done string, kind chartctl.GrantKind, name string, grants []*chartctl.Grant) string {
	if !kind.Valid() || name == "" || len(name) > 254 {
		return ""
	}
	var role chartctl.RepoRole
	for _, g := range grants {
		if g.Kind == kind && strings.EqualFold(g.Subject, name) {
			role = g.Role
		}
	}
	switch {
	case done == "granted" && role != "":
		return "The " + string(kind) + " " + name + " now has the " + string(role) + " role here."
	case done == "revoked" && role == "":
		return "The grant to the " + string(kind) + " " + name + " was revoked."
	}
	return ""
}

func (d *Dashboard) handleAccess(c echo.Context) error {
	_, ap, ok, err := d.accessPage(c, AccessPage{})
	if !ok {
		return err
	}
	return d.renderAccess(c, http.StatusOK, ap)
}

// accessURL is the address of repository repo's Access tab.
func accessURL(repo string) string {
	return "/repositories/" + url.PathEscape(repo) + "/access"
}

func (d *Dashboard) handleGrant(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	form := AccessPage{Kind: chartctl.GrantKind(c.FormValue("kind")), Name: strings.TrimSpace(c.FormValue("name")), Role: chartctl.RepoRole(c.FormValue("role"))}
	p, ap, ok, err := d.accessPage(c, form)
	if !ok {
		return err
	}
	if ap.grantsErr != nil {
		return d.refuseApp(c, ap.grantsErr)
	}
	fail := func(status int, msg string) error {
		ap.Error = msg
		return d.renderAccess(c, status, ap)
	}
	if !form.Kind.Valid() {
		return fail(http.StatusBadRequest, "Choose whom to grant the role: a team or a user.")
	}
	if form.Name == "" {
		return fail(http.StatusBadRequest, "Give the team's name or the user's email.")
	}
	role, err := app.ParseRepoRole(string(form.Role))
	if err != nil {
		return fail(http.StatusBadRequest, chartctl.ErrorMessage(err))
	}
	g, _, err := d.opts.App.Grant(c.Request().Context(), p, ap.Repo.Name, form.Kind, form.Name, role)
	switch chartctl.ErrorCode(err) {
	case "":
	case chartctl.EINVALID:
		return fail(http.StatusBadRequest, chartctl.ErrorMessage(err))
	case chartctl.ENOTFOUND:
		// The repository was visible a moment ago (accessPage): what is
		// not found is the team or user the form names.
		return fail(http.StatusBadRequest, chartctl.ErrorMessage(err))
	default:
		return d.refuseApp(c, err)
	}
	// Roles are cached with credentials; the grant applies at once.
	d.opts.Principals.InvalidateCredentials()
	return c.Redirect(http.StatusSeeOther, accessURL(ap.Repo.Name)+"?"+url.Values{"done": {"granted"}, "kind": {string(g.Kind)}, "name": {g.Subject}}.Encode())
}

func (d *Dashboard) handleRevoke(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return err
	}
	kind, err := app.ParseGrantKind(c.Param("kind"))
	if err != nil {
		return d.notFound(c)
	}
	name := c.Param("name")
	if err := d.opts.App.Revoke(c.Request().Context(), p, r.Name, kind, name); err != nil {
		return d.refuseApp(c, err)
	}
	d.opts.Principals.InvalidateCredentials()
	return c.Redirect(http.StatusSeeOther, accessURL(r.Name)+"?"+url.Values{"done": {"revoked"}, "kind": {string(kind)}, "name": {name}}.Encode())
}
