package chartctl

import (
	"context"
	"path"
	"strings"
	"time"
)

// RepoRole is a role on one repository (CONTRACT §18 "Access"), weakest
// first: read (pull), write (push and delete versions), maintain (adds the
// repository's settings: policy, retention, webhooks), admin (adds grants
// and deleting the repository).
type RepoRole string

// The repository roles.
const (
	RepoRoleRead     RepoRole = "read"
	RepoRoleWrite    RepoRole = "write"
	RepoRoleMaintain RepoRole = "maintain"
	RepoRoleAdmin    RepoRole = "admin"
)

// RepoRoles lists the repository roles, weakest first.
var RepoRoles = []RepoRole{RepoRoleRead, RepoRoleWrite, RepoRoleMaintain, RepoRoleAdmin}

func (r RepoRole) rank() int {
	switch r {
	case RepoRoleRead:
		return 1
	case RepoRoleWrite:
		return 2
	case RepoRoleMaintain:
		return 3
	case RepoRoleAdmin:
		return 4
	}
	return 0
}

// Valid reports whether r is one of RepoRoles.
func (r RepoRole) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r grants everything o grants. The zero RepoRole
// (no role) is at least nothing but the zero RepoRole.
func (r RepoRole) AtLeast(o RepoRole) bool { return r.rank() >= o.rank() }

// Max returns the stronger of r and o.
func (r RepoRole) Max(o RepoRole) RepoRole {
	if o.rank() > r.rank() {
		return o
	}
	return r
}

// OrgRoleToRepoRole maps an organization role to the role it gives on
// every repository of the organization (decision 4, as GitHub's base
// permissions): member → read, maintainer → maintain, owner → admin.
func OrgRoleToRepoRole(r Role) RepoRole {
	switch r {
	case RoleMember:
		return RepoRoleRead
	case RoleMaintainer:
		return RepoRoleMaintain
	case RoleOwner:
		return RepoRoleAdmin
	}
	return ""
}

// MatchRepo reports whether name matches one of patterns: shell globs
// (path.Match: `*`, `?`, `[…]`) over the whole repository name. A
// malformed pattern matches nothing (ValidateRepoPatterns refuses them).
func MatchRepo(patterns []string, name string) bool {
	for _, pat := range patterns {
		if ok, err := path.Match(pat, name); err == nil && ok {
			return true
		}
	}
	return false
}

// ValidateRepoPatterns checks repository patterns: non-empty, at most 100
// of them, each a well-formed glob of at most 200 bytes. param names the
// field in the EINVALID error.
func ValidateRepoPatterns(param string, patterns []string) error {
	if len(patterns) > 100 {
		return Invalid(param, "At most 100 repository patterns are allowed.")
	}
	for _, pat := range patterns {
		if strings.TrimSpace(pat) == "" || len(pat) > 200 {
			return Invalid(param, "A repository pattern must be 1 to 200 characters, such as \"acme-*\".")
		}
		if _, err := path.Match(pat, ""); err != nil {
			return Invalid(param, "Repository pattern %q is not a valid glob: %v.", pat, err)
		}
	}
	return nil
}

// GrantKind says whom a repository grant is for.
type GrantKind string

// The grant kinds.
const (
	GrantTeam GrantKind = "team"
	GrantUser GrantKind = "user"
)

// Valid reports whether k is a defined grant kind.
func (k GrantKind) Valid() bool { return k == GrantTeam || k == GrantUser }

// Grant gives a team or a user a role on one repository. It is bound to
// the repository's and the subject's IDs and deleted with either
// (decision 2).
type Grant struct {
	ID string
	// RepositoryID is the repository's ID; Repository its name (filled on
	// reads).
	RepositoryID string
	Repository   string
	Kind         GrantKind
	// SubjectID is the team's or the user's ID; Subject its name: the
	// team's name or the user's email (filled on reads).
	SubjectID string
	Subject   string
	Role      RepoRole
	// CreatedBy is the ID of the user who granted it.
	CreatedBy string
	CreatedAt time.Time
}

// RobotPermission is an action a robot account may take on the
// repositories its patterns name.
type RobotPermission string

// The robot permissions.
const (
	RobotPull   RobotPermission = "pull"
	RobotPush   RobotPermission = "push"
	RobotDelete RobotPermission = "delete"
)

// AllRobotPermissions lists the robot permissions in their canonical order.
var AllRobotPermissions = []RobotPermission{RobotPull, RobotPush, RobotDelete}

// RobotPermissions is a set of robot permissions.
type RobotPermissions []RobotPermission

// ParseRobotPermissions validates names (split on commas and spaces) as
// robot permissions, dropping duplicates, in canonical order; at least one
// is needed. param names the field in the EINVALID error.
func ParseRobotPermissions(param string, names []string) (RobotPermissions, error) {
	seen := map[RobotPermission]bool{}
	for _, n := range names {
		for _, f := range strings.FieldsFunc(n, func(r rune) bool { return r == ',' || r == ' ' }) {
			p := RobotPermission(strings.TrimSpace(f))
			if p != RobotPull && p != RobotPush && p != RobotDelete {
				return nil, Invalid(param, "Unknown permission %q; valid permissions are pull, push and delete.", f)
			}
			seen[p] = true
		}
	}
	var out RobotPermissions
	for _, p := range AllRobotPermissions {
		if seen[p] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, Invalid(param, "Give at least one permission: pull, push or delete.")
	}
	return out, nil
}

// Has reports whether the set holds p; push and delete imply pull.
func (s RobotPermissions) Has(p RobotPermission) bool {
	for _, have := range s {
		if have == p || (p == RobotPull && (have == RobotPush || have == RobotDelete)) {
			return true
		}
	}
	return false
}

// Role is the repository role the permissions amount to: write with push
// or delete (Principal.Permits tells the two apart), read with pull.
func (s RobotPermissions) Role() RepoRole {
	switch {
	case s.Has(RobotPush) || s.Has(RobotDelete):
		return RepoRoleWrite
	case s.Has(RobotPull):
		return RepoRoleRead
	}
	return ""
}

// Scopes are the scopes a robot credential carries: repo:write for push
// or delete, repo:read for pull.
func (s RobotPermissions) Scopes() Scopes {
	if s.Has(RobotPush) || s.Has(RobotDelete) {
		return Scopes{ScopeRepoRead, ScopeRepoWrite}
	}
	if s.Has(RobotPull) {
		return Scopes{ScopeRepoRead}
	}
	return Scopes{}
}

// Strings returns the permission names.
func (s RobotPermissions) Strings() []string {
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = string(p)
	}
	return out
}

// Robot is an organization's machine account (CONTRACT §18 "Access"): it
// belongs to the organization, not to the user who created it, so it
// survives that user's offboarding and is deleted with the organization.
// Only hashes of its secrets are stored.
type Robot struct {
	ID string
	// OrganizationID is the owning organization's ID; Organization its
	// name (filled on reads).
	OrganizationID string
	Organization   string
	Name           string
	Description    string
	// Repositories are the patterns (MatchRepo) of the organization's
	// repositories it may act on.
	Repositories []string
	Permissions  RobotPermissions
	// SecretHash is the hash (token.Hash) of the current secret.
	SecretHash []byte
	// PreviousSecretHash is the hash of the secret the last rotation
	// replaced, accepted until PreviousSecretExpiresAt (nil hash: none).
	PreviousSecretHash      []byte
	PreviousSecretExpiresAt *time.Time
	Disabled                bool
	// ExpiresAt, when set, is when the robot and everything exchanged for
	// it stop working.
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	// CreatedBy is the ID of the user who created it (who may since be
	// gone).
	CreatedBy string
	CreatedAt time.Time
}

// RobotUserNamePrefix starts a robot's basic-auth user name.
const RobotUserNamePrefix = "robot$"

// UserName is the robot's basic-auth user name, robot$ORG+NAME.
func (r *Robot) UserName() string { return RobotUserNamePrefix + r.Organization + "+" + r.Name }

// FullName is ORG/NAME, as /v1/user and audit show it.
func (r *Robot) FullName() string { return r.Organization + "/" + r.Name }

// Expired reports whether the robot's expiry has passed at now.
func (r *Robot) Expired(now time.Time) bool {
	return r.ExpiresAt != nil && !now.Before(*r.ExpiresAt)
}

// Until returns t, or the robot's expiry when that comes first: how long
// a credential issued for the robot until t may live.
func (r *Robot) Until(t time.Time) time.Time {
	if r.ExpiresAt != nil && r.ExpiresAt.Before(t) {
		return *r.ExpiresAt
	}
	return t
}

// ParseRobotUserName splits robot$ORG+NAME; ok is false for any other
// user name.
func ParseRobotUserName(s string) (org, name string, ok bool) {
	rest, found := strings.CutPrefix(s, RobotUserNamePrefix)
	if !found {
		return "", "", false
	}
	org, name, ok = strings.Cut(rest, "+")
	return org, name, ok && org != "" && name != ""
}

// RobotUpdate lists the changes UpdateRobot makes; nil fields stay.
type RobotUpdate struct {
	Description  *string
	Repositories []string
	Permissions  RobotPermissions
	Disabled     *bool
	// ExpiresAt changes the expiry; ClearExpiry removes it.
	ExpiresAt   *time.Time
	ClearExpiry bool
}

// TrustedPublisher lets a CI system's OIDC token be exchanged for a
// short-lived credential of a robot (keyless publishing, as PyPI calls
// it): tokens from Issuer for Audience whose claims match every pattern
// of Claims (exact, or a glob with `*`).
type TrustedPublisher struct {
	ID      string
	RobotID string
	// Issuer is the OIDC issuer URL (https, or listed in
	// --oidc-trust-insecure-issuers).
	Issuer   string
	Audience string
	// Claims maps a claim name (repository, ref, sub, …) to the pattern
	// its value must match.
	Claims    map[string]string
	CreatedBy string
	CreatedAt time.Time
}

// ExchangedCredential is the short-lived credential /v1/oidc/token returns
// for a trusted publisher's token: it acts as its robot until ExpiresAt
// (at most 15 minutes). Only its hash is stored, so every replica accepts
// it.
type ExchangedCredential struct {
	ID          string
	RobotID     string
	PublisherID string
	Hash        []byte
	ExpiresAt   time.Time
	CreatedAt   time.Time
}

// AccessStore keeps repository grants, robot accounts, trusted publishers
// and the credentials exchanged for them. Every mutating method writes
// the Change its context carries, as Store's do.
type AccessStore interface {
	// PutGrant gives g.Kind g.SubjectID role g.Role on repository
	// g.RepositoryID, replacing the role of an existing grant to the same
	// subject, and returns the stored grant with its names filled.
	// Returns ENOTFOUND if the repository, team or user does not exist.
	PutGrant(ctx context.Context, g *Grant) (*Grant, error)
	// Grants returns the repository's grants, teams first, then by name.
	Grants(ctx context.Context, repositoryID string) ([]*Grant, error)
	// DeleteGrant removes the grant of the repository to the subject.
	// Returns ENOTFOUND if there is none.
	DeleteGrant(ctx context.Context, repositoryID string, kind GrantKind, subjectID string) error
	// GrantsFor returns, by repository ID, the strongest role the grants
	// give the user with this id and email: their own grants and those of
	// the teams where email is a member.
	GrantsFor(ctx context.Context, userID, email string) (map[string]RepoRole, error)

	// CreateRobot stores r (its OrganizationID set), filling ID and
	// CreatedAt when empty. Returns ECONFLICT if the organization has a
	// robot of that name, ENOTFOUND if the organization does not exist.
	CreateRobot(ctx context.Context, r *Robot) error
	// Robot returns the organization's robot named name. Returns ENOTFOUND.
	Robot(ctx context.Context, org, name string) (*Robot, error)
	// RobotByID returns the robot with id. Returns ENOTFOUND.
	RobotByID(ctx context.Context, id string) (*Robot, error)
	// RobotBySecretHash returns the robot whose current or previous secret
	// hashes to h (the caller checks the previous one's expiry). Returns
	// ENOTFOUND.
	RobotBySecretHash(ctx context.Context, h []byte) (*Robot, error)
	// Robots returns the organization's robots, by name.
	Robots(ctx context.Context, org string) ([]*Robot, error)
	// UpdateRobot applies upd and returns the robot. Disabling it ends the
	// credentials exchanged for it. Returns ENOTFOUND.
	UpdateRobot(ctx context.Context, id string, upd RobotUpdate) (*Robot, error)
	// RotateRobot makes secretHash the robot's secret; the replaced one
	// stays valid until previousUntil (nil: not at all). Returns ENOTFOUND.
	RotateRobot(ctx context.Context, id string, secretHash []byte, previousUntil *time.Time) (*Robot, error)
	// DeleteRobot deletes the robot with its trusted publishers and
	// exchanged credentials. Returns ENOTFOUND.
	DeleteRobot(ctx context.Context, id string) error
	// TouchRobots records last-used times for many robots in one write;
	// robots that no longer exist are skipped.
	TouchRobots(ctx context.Context, used map[string]time.Time) error

	// AddPublisher stores p, filling ID and CreatedAt when empty. Returns
	// ENOTFOUND if the robot does not exist.
	AddPublisher(ctx context.Context, p *TrustedPublisher) error
	// Publishers returns the robot's trusted publishers, oldest first.
	Publishers(ctx context.Context, robotID string) ([]*TrustedPublisher, error)
	// PublishersByIssuer returns every trusted publisher of issuer (exact
	// URL), oldest first.
	PublishersByIssuer(ctx context.Context, issuer string) ([]*TrustedPublisher, error)
	// DeletePublisher removes the robot's publisher id. Returns ENOTFOUND.
	DeletePublisher(ctx context.Context, robotID, id string) error

	// CreateExchangedCredential stores c, filling ID and CreatedAt when
	// empty, and drops expired ones. Returns ENOTFOUND if the robot does
	// not exist.
	CreateExchangedCredential(ctx context.Context, c *ExchangedCredential) error
	// ExchangedCredentialByHash returns the credential whose hash is h.
	// Returns ENOTFOUND (also once it expired and was dropped).
	ExchangedCredentialByHash(ctx context.Context, h []byte) (*ExchangedCredential, error)
	// RememberTokenID records that the token issuer's jti was exchanged,
	// until until (its expiry); fresh is false when it was already on
	// record and unexpired (a replay). Expired records are dropped.
	RememberTokenID(ctx context.Context, issuer, jti string, until time.Time) (fresh bool, err error)

	// DeleteOrganization deletes the organization with everything bound to
	// it (decision 2): its teams and their memberships and grants, robots,
	// trusted publishers and exchanged credentials, webhooks and their
	// deliveries, quota and usage; its name stays reserved for the store's
	// name grace. Returns ENOTFOUND, and ECONFLICT while it owns
	// repositories.
	DeleteOrganization(ctx context.Context, name string) error
}
