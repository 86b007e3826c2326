package app

import (
	"context"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

// This file holds robot accounts (CONTRACT §18 "Access"): machine
// credentials an organization owns. Owners of the organization (and
// server admins) manage them through a credential with org:write;
// maintainers and owners see them through one with org:read. A robot's
// own credential carries only repository scopes, so it never manages
// robots, teams, organizations or keys.

// MaxRobotGrace is the longest a replaced robot secret may keep working
// after a rotation.
const MaxRobotGrace = 7 * 24 * time.Hour

// MaxRobotDescription is the longest robot description, in characters.
const MaxRobotDescription = 1024

// RobotInput is what CreateRobot takes, as the request gave it.
type RobotInput struct {
	Name         string
	Description  string
	Repositories []string
	Permissions  []string
	ExpiresAt    *time.Time
}

// RobotChanges lists the changes UpdateRobot makes; nil fields stay.
type RobotChanges struct {
	Description  *string
	Repositories []string
	Permissions  []string
	Disabled     *bool
	ExpiresAt    *time.Time
	// ClearExpiry removes the expiry.
	ClearExpiry bool
}

// RequireHuman refuses robot accounts and the credentials exchanged for
// them (EFORBIDDEN) what only a person may do, such as creating
// repositories or keys: what says what in the message.
func RequireHuman(p *chartctl.Principal, what string) error {
	if p != nil && p.Robot != nil {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Robot account %s cannot %s: robots only pull, push or delete chart versions in the repositories they name.", p.Robot.FullName(), what)
	}
	return nil
}

// robotOrg loads organization org for robot management by p: org:write
// and the owner role to manage, org:read and the maintainer role to see
// (see robotOrgAs).
func (a *App) robotOrg(ctx context.Context, p *chartctl.Principal, org string, manage bool) (*chartctl.Organization, error) {
	if manage {
		return a.robotOrgAs(ctx, p, org, chartctl.ScopeOrgWrite, chartctl.RoleOwner, "Managing the robot accounts of organization %q needs the owner role there.")
	}
	return a.robotOrgAs(ctx, p, org, chartctl.ScopeOrgRead, chartctl.RoleMaintainer, "Seeing the robot accounts of organization %q needs the maintainer role there.")
}

// robotOrgAs loads organization org for p acting on its robot accounts:
// the scope, a person (robots never manage robots), visibility
// (ENOTFOUND), then role in org (server admins have every role). forbidden
// is the message of the EFORBIDDEN refusal for too weak a role, with a %q
// for the organization's name.
func (a *App) robotOrgAs(ctx context.Context, p *chartctl.Principal, org string, scope chartctl.Scope, role chartctl.Role, forbidden string) (*chartctl.Organization, error) {
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	if !p.Scopes.Allows(scope) {
		return nil, chartctl.ScopeRequired(scope)
	}
	if err := RequireHuman(p, "manage robot accounts"); err != nil {
		return nil, err
	}
	o, err := a.VisibleOrg(ctx, p, org)
	if err != nil {
		return nil, err
	}
	if !p.OrgRole(o.Name).AtLeast(role) {
		return nil, chartctl.Errorf(chartctl.EFORBIDDEN, forbidden, o.Name)
	}
	return o, nil
}

// robotNotFound is the ENOTFOUND error of robot name in org.
func robotNotFound(org, name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Robot account %q not found in organization %q.", name, org)
}

// loadRobot returns org's robot name, ENOTFOUND naming it.
func (a *App) loadRobot(ctx context.Context, org, name string) (*chartctl.Robot, error) {
	if chartctl.ValidateName("name", name) != nil {
		return nil, robotNotFound(org, name)
	}
	r, err := a.Store.Robot(ctx, org, name)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, robotNotFound(org, name)
	}
	return r, err
}

// Robots lists org's robot accounts, by name, for p (maintainers and
// owners of org, server admins).
func (a *App) Robots(ctx context.Context, p *chartctl.Principal, org string) ([]*chartctl.Robot, error) {
	o, err := a.robotOrg(ctx, p, org, false)
	if err != nil {
		return nil, err
	}
	return a.Store.Robots(ctx, o.Name)
}

// Robot returns org's robot account name for p (as Robots).
func (a *App) Robot(ctx context.Context, p *chartctl.Principal, org, name string) (*chartctl.Robot, error) {
	o, err := a.robotOrg(ctx, p, org, false)
	if err != nil {
		return nil, err
	}
	return a.loadRobot(ctx, o.Name, name)
}

// validRobotRepositories checks a robot's repository patterns: at least
// one, each a valid glob.
func validRobotRepositories(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, chartctl.Invalid("repositories", "repositories is required: list the repository patterns the robot may act on, such as \"acme-*\".")
	}
	out := make([]string, len(patterns))
	for i, pat := range patterns {
		out[i] = strings.TrimSpace(pat)
	}
	if err := chartctl.ValidateRepoPatterns("repositories", out); err != nil {
		return nil, err
	}
	return out, nil
}

func validRobotDescription(d string) (string, error) {
	d = strings.TrimSpace(d)
	if n := utf8.RuneCountInString(d); n > MaxRobotDescription {
		return "", chartctl.Invalid("description", "description must be at most %d characters (it has %d).", MaxRobotDescription, n)
	}
	return d, nil
}

func (a *App) validRobotExpiry(t *time.Time) error {
	if t != nil && !t.After(a.Now()) {
		return chartctl.Invalid("expires_at", "expires_at must be in the future.")
	}
	return nil
}

// CreateRobot creates a robot account in org for p (owners of org and
// server admins, org:write) and returns it with its secret, which is
// shown this once: only its hash is stored. The name is a name as
// repositories' are, as it is part of the robot's user name
// (robot$ORG+NAME) and of its URL. Returns EINVALID naming the bad field,
// ECONFLICT when org has a robot of that name.
func (a *App) CreateRobot(ctx context.Context, p *chartctl.Principal, org string, in RobotInput) (*chartctl.Robot, string, error) {
	o, err := a.robotOrg(ctx, p, org, true)
	if err != nil {
		return nil, "", err
	}
	if err := chartctl.ValidateName("name", in.Name); err != nil {
		return nil, "", err
	}
	desc, err := validRobotDescription(in.Description)
	if err != nil {
		return nil, "", err
	}
	repos, err := validRobotRepositories(in.Repositories)
	if err != nil {
		return nil, "", err
	}
	if len(in.Permissions) == 0 {
		return nil, "", chartctl.Invalid("permissions", "permissions is required: list what the robot may do, of pull, push and delete.")
	}
	perms, err := chartctl.ParseRobotPermissions("permissions", in.Permissions)
	if err != nil {
		return nil, "", err
	}
	if err := a.validRobotExpiry(in.ExpiresAt); err != nil {
		return nil, "", err
	}
	secret, hash := token.New(token.RobotSecretPrefix)
	r := &chartctl.Robot{ID: NewID("rob_"), OrganizationID: o.ID, Organization: o.Name, Name: in.Name, Description: desc,
		Repositories: repos, Permissions: perms, SecretHash: hash, ExpiresAt: in.ExpiresAt, CreatedBy: p.User.ID, CreatedAt: a.Now().UTC()}
	rctx := a.Record(ctx, "robot.create", r.FullName(), o.Name,
		a.NewEvent(ctx, chartctl.EventRobotCreated, "", o.Name, robotPath(o.Name, r.Name), r.Name, a.RobotData(ctx, r)))
	if err := a.Store.CreateRobot(rctx, r); err != nil {
		if chartctl.ErrorCode(err) == chartctl.ECONFLICT {
			return nil, "", chartctl.Errorf(chartctl.ECONFLICT, "Organization %q already has a robot account named %q.", o.Name, r.Name)
		}
		return nil, "", err
	}
	a.Committed()
	return r, secret, nil
}

// UpdateRobot changes org's robot name for p (as CreateRobot). Disabling
// it stops its secret and the credentials exchanged for it at once;
// enabling it again brings its secret back. Audited as robot.update.
func (a *App) UpdateRobot(ctx context.Context, p *chartctl.Principal, org, name string, ch RobotChanges) (*chartctl.Robot, error) {
	o, err := a.robotOrg(ctx, p, org, true)
	if err != nil {
		return nil, err
	}
	r, err := a.loadRobot(ctx, o.Name, name)
	if err != nil {
		return nil, err
	}
	var upd chartctl.RobotUpdate
	if ch.Description != nil {
		d, err := validRobotDescription(*ch.Description)
		if err != nil {
			return nil, err
		}
		upd.Description = &d
	}
	if ch.Repositories != nil {
		if upd.Repositories, err = validRobotRepositories(ch.Repositories); err != nil {
			return nil, err
		}
	}
	if ch.Permissions != nil {
		if upd.Permissions, err = chartctl.ParseRobotPermissions("permissions", ch.Permissions); err != nil {
			return nil, err
		}
	}
	if ch.ExpiresAt != nil && ch.ClearExpiry {
		return nil, chartctl.Invalid("expires_at", "Give either expires_at or no_expiry, not both.")
	}
	if err := a.validRobotExpiry(ch.ExpiresAt); err != nil {
		return nil, err
	}
	upd.ExpiresAt, upd.ClearExpiry, upd.Disabled = ch.ExpiresAt, ch.ClearExpiry, ch.Disabled
	out, err := a.Store.UpdateRobot(a.Record(ctx, "robot.update", r.FullName(), o.Name), r.ID, upd)
	if err != nil {
		return nil, err
	}
	a.Committed()
	return out, nil
}

// RotateRobot gives org's robot name a new secret for p (as CreateRobot)
// and returns the robot with it. The replaced secret keeps working for
// grace (0: not at all, at most MaxRobotGrace), so a pipeline can switch
// without a failed run.
func (a *App) RotateRobot(ctx context.Context, p *chartctl.Principal, org, name string, grace time.Duration) (*chartctl.Robot, string, error) {
	o, err := a.robotOrg(ctx, p, org, true)
	if err != nil {
		return nil, "", err
	}
	if grace < 0 || grace > MaxRobotGrace {
		return nil, "", chartctl.Invalid("grace", "grace must be from 0s to 7d (how long the replaced secret keeps working).")
	}
	r, err := a.loadRobot(ctx, o.Name, name)
	if err != nil {
		return nil, "", err
	}
	var until *time.Time
	if grace > 0 {
		t := a.Now().UTC().Add(grace)
		until = &t
	}
	secret, hash := token.New(token.RobotSecretPrefix)
	rctx := a.Record(ctx, "robot.rotate", r.FullName(), o.Name,
		a.NewEvent(ctx, chartctl.EventRobotRotated, "", o.Name, robotPath(o.Name, r.Name), r.Name, a.RobotData(ctx, r)))
	out, err := a.Store.RotateRobot(rctx, r.ID, hash, until)
	if err != nil {
		return nil, "", err
	}
	a.Committed()
	return out, secret, nil
}

// DeleteRobot deletes org's robot name for p (as CreateRobot), with its
// trusted publishers and the credentials exchanged for it.
func (a *App) DeleteRobot(ctx context.Context, p *chartctl.Principal, org, name string) (*chartctl.Robot, error) {
	o, err := a.robotOrg(ctx, p, org, true)
	if err != nil {
		return nil, err
	}
	r, err := a.loadRobot(ctx, o.Name, name)
	if err != nil {
		return nil, err
	}
	rctx := a.Record(ctx, "robot.delete", r.FullName(), o.Name,
		a.NewEvent(ctx, chartctl.EventRobotDeleted, "", o.Name, robotPath(o.Name, r.Name), r.Name, a.RobotData(ctx, r)))
	if err := a.Store.DeleteRobot(rctx, r.ID); err != nil {
		return nil, err
	}
	a.Committed()
	return r, nil
}

// RobotCreator returns the email of the user who created r, "" once that
// account is gone.
func (a *App) RobotCreator(ctx context.Context, r *chartctl.Robot) string {
	if r.CreatedBy == "" {
		return ""
	}
	u, err := a.Store.User(ctx, r.CreatedBy)
	if err != nil {
		return ""
	}
	return u.Email
}

// RobotData is a robot account as /v1 shows it (never a secret or its
// hash), for events.
func (a *App) RobotData(ctx context.Context, r *chartctl.Robot) map[string]any {
	d := map[string]any{"name": r.Name, "organization": r.Organization, "username": r.UserName(), "description": r.Description,
		"repositories": r.Repositories, "permissions": r.Permissions.Strings(), "disabled": r.Disabled,
		"expires_at": nil, "last_used_at": nil, "created_at": ts(r.CreatedAt)}
	if r.ExpiresAt != nil {
		d["expires_at"] = ts(*r.ExpiresAt)
	}
	if r.LastUsedAt != nil {
		d["last_used_at"] = ts(*r.LastUsedAt)
	}
	if by := a.RobotCreator(ctx, r); by != "" {
		d["created_by"] = by
	}
	return d
}

func robotPath(org, name string) string {
	return "/v1/organizations/" + url.PathEscape(org) + "/robots/" + url.PathEscape(name)
}

// CheckRobot says why robot r's credential is refused at now
// (EUNAUTHORIZED): disabled or expired. nil when it may act.
func CheckRobot(r *chartctl.Robot, now time.Time) error {
	switch {
	case r.Disabled:
		return chartctl.Errorf(chartctl.EUNAUTHORIZED, "Robot account %s is disabled; an owner of organization %q can enable it (chartctl robot enable %s --org %s).", r.FullName(), r.Organization, r.Name, r.Organization)
	case r.Expired(now):
		return chartctl.Errorf(chartctl.EUNAUTHORIZED, "Robot account %s expired; an owner of organization %q can extend it or create a new one.", r.FullName(), r.Organization)
	}
	return nil
}

// CheckRobotSecret is CheckRobot for a robot found by the hash h of the
// secret presented: a replaced secret is refused once its grace is over.
// until is when the credential stops on its own (the robot's expiry, the
// replaced secret's grace), nil for never.
func CheckRobotSecret(r *chartctl.Robot, h []byte, now time.Time) (until *time.Time, err error) {
	if err := CheckRobot(r, now); err != nil {
		return nil, err
	}
	until = r.ExpiresAt
	if string(h) != string(r.SecretHash) {
		// Found by the previous secret's hash.
		if r.PreviousSecretExpiresAt == nil || !now.Before(*r.PreviousSecretExpiresAt) {
			return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "This secret of robot account %s was replaced by a rotation; use the new secret.", r.FullName())
		}
		if until == nil || r.PreviousSecretExpiresAt.Before(*until) {
			until = r.PreviousSecretExpiresAt
		}
	}
	return until, nil
}

// RobotPrincipal is the principal of robot r's credential: a stand-in
// user (never stored) that names the robot, the scopes its permissions
// give, and its repository patterns. credID is the robot's ID for its
// secret, the exchanged credential's ID for one exchanged for it.
func RobotPrincipal(r *chartctl.Robot, credID string) *chartctl.Principal {
	return &chartctl.Principal{
		User:         &chartctl.User{ID: r.ID, Email: r.UserName(), CreatedAt: r.CreatedAt},
		CredentialID: credID,
		Scopes:       r.Permissions.Scopes(),
		Repositories: append([]string{}, r.Repositories...),
		Robot:        r,
	}
}
