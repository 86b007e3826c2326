package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// OrgPage shows an organization: its teams and repositories.
type OrgPage struct {
	Org   *chartctl.Organization
	Role  chartctl.Role
	Teams []*chartctl.Team
	Repos []*chartctl.Repository
	// CanWebhooks is set for owners and server admins, who manage the
	// organization's webhooks.
	CanWebhooks bool
	// Robots are its robot accounts, for its maintainers and owners;
	// ShowRobots is set when the viewer may see them.
	Robots     []*chartctl.Robot
	ShowRobots bool
}

// TeamPage shows a team's members; owners also get the forms that manage
// them.
type TeamPage struct {
	Team      *chartctl.Team
	Members   []*chartctl.Member
	CanManage bool
	Roles     []chartctl.Role
	// Email and Role refill the add form after an error.
	Email string
	Role  chartctl.Role
	Error string
}

func (d *Dashboard) handleOrg(c echo.Context) error {
	p, err := d.viewer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o, err := d.opts.App.VisibleOrg(ctx, p, c.Param("org"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.notFound(c)
	} else if err != nil {
		return err
	}
	op := OrgPage{Org: o, Role: p.OrgRole(o.Name), CanWebhooks: p != nil && (p.IsAdmin() || p.OrgRole(o.Name).AtLeast(chartctl.RoleOwner))}
	if op.Teams, err = d.opts.Store.Teams(ctx, o.Name); err != nil {
		return err
	}
	repos, err := d.opts.Store.Repositories(ctx)
	if err != nil {
		return err
	}
	for _, r := range repos {
		if r.Organization == o.Name && p.CanSeeRepo(r) {
			op.Repos = append(op.Repos, r)
		}
	}
	// Robot accounts are listed to whom the application shows them (the
	// organization's maintainers and owners); to anyone else the section
	// is simply absent.
	if p != nil {
		// Anonymous visitors never see robots: their page views write
		// nothing.
		d.flushUsage()
	}
	switch robots, err := d.opts.App.Robots(ctx, p, o.Name); chartctl.ErrorCode(err) {
	case "":
		op.Robots, op.ShowRobots = robots, true
	case chartctl.EFORBIDDEN, chartctl.EUNAUTHORIZED, chartctl.ENOTFOUND:
	default:
		return err
	}
	pg := d.browsePage(c, o.Name, "", "/organizations/"+o.Name, op)
	if name := c.QueryParam("robot_deleted"); name != "" && op.ShowRobots && !hasRobot(op.Robots, name) && chartctl.ValidateName("name", name) == nil {
		// The query string is anyone's to write: the notice shows only
		// for a name the organization really has no robot of.
		pg.Flash = "Robot account " + name + " was deleted."
	}
	return d.render(c, http.StatusOK, "org", pg)
}

// hasRobot reports whether robots has one named name.
func hasRobot(robots []*chartctl.Robot, name string) bool {
	for _, r := range robots {
		if r.Name == name {
			return true
		}
	}
	return false
}

func (d *Dashboard) handleTeam(c echo.Context) error {
	return d.renderTeam(c, http.StatusOK, TeamPage{}, "")
}

// renderTeam renders the team page with tp's form fields and flash.
func (d *Dashboard) renderTeam(c echo.Context, status int, tp TeamPage, flash string) error {
	p, err := d.viewer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, err := d.opts.App.VisibleTeam(ctx, p, c.Param("team"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.notFound(c)
	} else if err != nil {
		return err
	}
	tp.Team = t
	tp.CanManage = app.CanManageTeam(p, t)
	tp.Roles = chartctl.Roles
	if tp.Role == "" {
		tp.Role = chartctl.RoleMember
	}
	if tp.Members, err = d.opts.Store.Members(ctx, t.Name); err != nil {
		return err
	}
	pg := d.browsePage(c, t.Name+" · "+t.Organization, "", "/teams/"+t.Name, tp)
	pg.Flash = flash
	if flash == "" {
		pg.Flash = teamFlash(c.QueryParam("done"), c.QueryParam("email"), tp.Members)
	}
	return d.render(c, status, "team", pg)
}

// teamFlash is the notice after a member change (post, redirect, get).
// The query string is anyone's to write, so the notice shows only for an
// email address whose membership agrees with it: a crafted link cannot
// put its own words in the page's success notice.
func teamFlash(done, email string, members []*chartctl.Member) string {
	email, err := app.ValidateEmail(email)
	if err != nil {
		return ""
	}
	member := false
	for _, m := range members {
		if strings.EqualFold(m.Email, email) {
			member = true
		}
	}
	switch {
	case done == "added" && member:
		return email + " was added to the team."
	case done == "role" && member:
		return "The role of " + email + " was changed."
	case done == "removed" && !member:
		return email + " was removed from the team."
	}
	return ""
}

// manageTeam checks the form's CSRF token and loads the team the signed-in
// user may manage, answering the request itself when not (the bool is
// false then).
func (d *Dashboard) manageTeam(c echo.Context) (*chartctl.Team, bool, error) {
	if err := d.CheckCSRF(c); err != nil {
		return nil, false, d.refuseCSRF(c, err)
	}
	p, err := d.viewer(c)
	if err != nil {
		return nil, false, err
	}
	t, err := d.opts.App.ManageableTeam(c.Request().Context(), p, c.Param("team"))
	switch chartctl.ErrorCode(err) {
	case "":
		return t, true, nil
	case chartctl.ENOTFOUND:
		return nil, false, d.notFound(c)
	case chartctl.EFORBIDDEN:
		return nil, false, d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(err))
	}
	return nil, false, err
}

func (d *Dashboard) afterMemberChange(c echo.Context, t *chartctl.Team, done, email string) error {
	// Roles are cached with credentials; the change applies at once.
	d.opts.Principals.InvalidateCredentials()
	return c.Redirect(http.StatusSeeOther, "/teams/"+t.Name+"?"+url.Values{"done": {done}, "email": {email}}.Encode())
}

func (d *Dashboard) handleAddMember(c echo.Context) error {
	t, ok, err := d.manageTeam(c)
	if !ok {
		return err
	}
	email := strings.TrimSpace(c.FormValue("email"))
	tp := TeamPage{Email: email, Role: chartctl.Role(c.FormValue("role"))}
	role, err := app.ParseRole(c.FormValue("role"))
	if err == nil {
		var m *chartctl.Member
		if m, err = d.opts.App.AddMemberByEmail(c.Request().Context(), t, email, role); err == nil {
			return d.afterMemberChange(c, t, "added", m.Email)
		}
	}
	switch chartctl.ErrorCode(err) {
	case chartctl.EINVALID, chartctl.ECONFLICT:
		tp.Error = chartctl.ErrorMessage(err)
		return d.renderTeam(c, http.StatusBadRequest, tp, "")
	}
	return err
}

func (d *Dashboard) handleChangeRole(c echo.Context) error {
	t, ok, err := d.manageTeam(c)
	if !ok {
		return err
	}
	role, err := app.ParseRole(c.FormValue("role"))
	if err != nil || c.FormValue("role") == "" {
		return d.renderTeam(c, http.StatusBadRequest, TeamPage{Error: "Choose member, maintainer or owner."}, "")
	}
	m, err := d.opts.App.UpdateMemberRole(c.Request().Context(), t, c.Param("member"), role)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.notFound(c)
	} else if err != nil {
		return err
	}
	return d.afterMemberChange(c, t, "role", m.Email)
}

func (d *Dashboard) handleRemoveMember(c echo.Context) error {
	t, ok, err := d.manageTeam(c)
	if !ok {
		return err
	}
	m, err := d.opts.App.RemoveMember(c.Request().Context(), t, c.Param("member"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.notFound(c)
	} else if err != nil {
		return err
	}
	return d.afterMemberChange(c, t, "removed", m.Email)
}

// RepoSettingsPage is the repository settings form.
type RepoSettingsPage struct {
	Repo      *chartctl.Repository
	CanDelete bool
	Error     string
	// DeleteError is shown beside the delete form.
	DeleteError string
}

// settingsRepo loads the repository whose settings the signed-in user may
// change, answering the request itself when not (the bool is false then).
func (d *Dashboard) settingsRepo(c echo.Context) (*chartctl.Repository, *chartctl.Principal, bool, error) {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return nil, nil, false, err
	}
	if !p.RepoRole(r).AtLeast(app.SettingsRole) {
		return nil, nil, false, d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(app.ForbiddenRole(app.SettingsRole, r)))
	}
	return r, p, true, nil
}

func (d *Dashboard) handleRepoSettings(c echo.Context) error {
	r, p, ok, err := d.settingsRepo(c)
	if !ok {
		return err
	}
	pg := d.page(c, "Settings · "+r.Name, "repos", "", RepoSettingsPage{Repo: r, CanDelete: p.RepoRole(r).AtLeast(chartctl.RepoRoleAdmin)})
	if c.QueryParam("saved") == "1" {
		pg.Flash = "The settings were saved."
	}
	return d.render(c, http.StatusOK, "repo_settings", pg)
}

func (d *Dashboard) handleUpdateRepo(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	r, p, ok, err := d.settingsRepo(c)
	if !ok {
		return err
	}
	desc, vis := c.FormValue("description"), c.FormValue("visibility")
	_, err = d.opts.App.UpdateRepository(c.Request().Context(), p, r.Name, app.RepositoryChanges{Description: &desc, Visibility: &vis})
	if chartctl.ErrorCode(err) == chartctl.EINVALID {
		shown := *r
		shown.Description = desc
		return d.render(c, http.StatusBadRequest, "repo_settings", d.page(c, "Settings · "+r.Name, "repos", "",
			RepoSettingsPage{Repo: &shown, CanDelete: p.RepoRole(r).AtLeast(chartctl.RepoRoleAdmin), Error: chartctl.ErrorMessage(err)}))
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/repositories/"+r.Name+"/settings?saved=1")
}

func (d *Dashboard) handleDeleteRepo(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	r, p, ok, err := d.settingsRepo(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	wr, err := d.opts.App.WritableRepo(ctx, p, r.Name, chartctl.RepoRoleAdmin)
	if chartctl.ErrorCode(err) == chartctl.EFORBIDDEN {
		return d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(err))
	} else if err != nil {
		return err
	}
	if strings.TrimSpace(c.FormValue("confirm")) != r.Name {
		return d.render(c, http.StatusBadRequest, "repo_settings", d.page(c, "Settings · "+r.Name, "repos", "",
			RepoSettingsPage{Repo: r, CanDelete: true, DeleteError: "Type the repository's name, " + r.Name + ", to delete it."}))
	}
	if err := d.opts.App.DeleteRepository(ctx, wr); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/repositories?deleted="+url.QueryEscape(r.Name))
}
