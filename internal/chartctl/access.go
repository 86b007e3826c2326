package chartctl

import (
	"sort"
	"strings"
)

// Role is a user's role in a team, and so in the team's organization.
type Role string

// The roles, weakest first.
const (
	RoleMember     Role = "member"
	RoleMaintainer Role = "maintainer"
	RoleOwner      Role = "owner"
)

// Roles lists the valid roles, weakest first.
var Roles = []Role{RoleMember, RoleMaintainer, RoleOwner}

func (r Role) rank() int {
	switch r {
	case RoleMember:
		return 1
	case RoleMaintainer:
		return 2
	case RoleOwner:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r grants everything o grants. The zero Role (no
// role) is at least nothing but the zero Role.
func (r Role) AtLeast(o Role) bool { return r.rank() >= o.rank() }

// Max returns the stronger of r and o.
func (r Role) Max(o Role) Role {
	if o.rank() > r.rank() {
		return o
	}
	return r
}

// Scope is a permission a credential carries.
type Scope string

// The scopes of the specification. X:write implies X:read.
const (
	ScopeRepoRead  Scope = "repo:read"
	ScopeRepoWrite Scope = "repo:write"
	ScopeTeamRead  Scope = "team:read"
	ScopeTeamWrite Scope = "team:write"
	ScopeOrgRead   Scope = "org:read"
	ScopeOrgWrite  Scope = "org:write"
)

// The scopes added after review (CONTRACT §13).
const (
	// ScopeKeysWrite lets a credential create and revoke its user's own API
	// keys. Keys outlive the credential that created them.
	ScopeKeysWrite Scope = "keys:write"
	// ScopeAdmin lets an admin user's credential use the server-admin
	// endpoints (users, other users' keys, OAuth clients).
	ScopeAdmin Scope = "admin"
)

// OriginalScopes are the six scopes of the specification. A key stored
// before keys:write and admin existed that holds all six is treated as
// holding every scope.
var OriginalScopes = []Scope{ScopeRepoRead, ScopeRepoWrite, ScopeTeamRead, ScopeTeamWrite, ScopeOrgRead, ScopeOrgWrite}

// AllScopes lists every scope in a stable order.
var AllScopes = []Scope{ScopeRepoRead, ScopeRepoWrite, ScopeTeamRead, ScopeTeamWrite, ScopeOrgRead, ScopeOrgWrite, ScopeKeysWrite, ScopeAdmin}

// LoginScopes are the scopes `chartctl login` asks for by default: the six
// original scopes and keys:write, not admin.
var LoginScopes = []Scope{ScopeRepoRead, ScopeRepoWrite, ScopeTeamRead, ScopeTeamWrite, ScopeOrgRead, ScopeOrgWrite, ScopeKeysWrite}

// Valid reports whether s is a defined scope.
func (s Scope) Valid() bool {
	for _, v := range AllScopes {
		if v == s {
			return true
		}
	}
	return false
}

// Description says in words what the scope allows, for consent pages.
func (s Scope) Description() string {
	switch s {
	case ScopeRepoRead:
		return "Read repositories and download charts"
	case ScopeRepoWrite:
		return "Create repositories and upload or delete charts"
	case ScopeTeamRead:
		return "Read teams and their members"
	case ScopeTeamWrite:
		return "Create teams and manage their members"
	case ScopeOrgRead:
		return "Read organizations"
	case ScopeOrgWrite:
		return "Create and manage organizations"
	case ScopeKeysWrite:
		return "Create and revoke your API keys (keys it creates keep working even after you remove this access)"
	case ScopeAdmin:
		return "Act as a server administrator: create, disable and delete users, manage other users' API keys and register applications"
	}
	return string(s)
}

// Scopes is a set of scopes.
type Scopes []Scope

// ParseScopes parses a list of scope names separated by spaces or commas.
// It returns EINVALID naming param for an unknown scope. Duplicates are
// dropped and the result is sorted in AllScopes order.
func ParseScopes(param, s string) (Scopes, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	return NewScopes(param, fields)
}

// NewScopes validates names as scopes, as ParseScopes does.
func NewScopes(param string, names []string) (Scopes, error) {
	seen := map[Scope]bool{}
	for _, f := range names {
		sc := Scope(strings.TrimSpace(f))
		if !sc.Valid() {
			return nil, Invalid(param, "Unknown scope %q; valid scopes are %s.", f, Scopes(AllScopes).String())
		}
		seen[sc] = true
	}
	out := Scopes{}
	for _, sc := range AllScopes {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Allows reports whether the set grants need; X:write implies X:read.
func (s Scopes) Allows(need Scope) bool {
	for _, have := range s {
		if have == need {
			return true
		}
		if strings.HasSuffix(string(need), ":read") && string(have) == strings.TrimSuffix(string(need), ":read")+":write" {
			return true
		}
	}
	return false
}

// Covers reports whether s allows every scope in o.
func (s Scopes) Covers(o Scopes) bool {
	for _, need := range o {
		if !s.Allows(need) {
			return false
		}
	}
	return true
}

// Strings returns the scope names.
func (s Scopes) Strings() []string {
	out := make([]string, len(s))
	for i, sc := range s {
		out[i] = string(sc)
	}
	return out
}

// String joins the scope names with spaces (the OAuth form).
func (s Scopes) String() string { return strings.Join(s.Strings(), " ") }

// Sorted returns a copy in AllScopes order.
func (s Scopes) Sorted() Scopes {
	out := append(Scopes(nil), s...)
	order := map[Scope]int{}
	for i, sc := range AllScopes {
		order[sc] = i
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out
}

// Visibility says who may read a repository.
type Visibility string

// Visibilities.
const (
	// VisibilityPrivate repositories are readable by their owner, by the
	// members of their organization and by those its grants name.
	VisibilityPrivate Visibility = "private"
	// VisibilityInternal repositories are readable by every signed-in
	// human user of the server (not by robots or exchanged credentials,
	// which read only what their patterns name), as GitLab's internal
	// projects are.
	VisibilityInternal Visibility = "internal"
	// VisibilityPublic repositories are readable by every authenticated
	// caller, and by anyone through the Helm protocol.
	VisibilityPublic Visibility = "public"
)

// Visibilities lists the valid visibilities, narrowest first.
var Visibilities = []Visibility{VisibilityPrivate, VisibilityInternal, VisibilityPublic}

// Valid reports whether v is a defined visibility.
func (v Visibility) Valid() bool {
	return v == VisibilityPrivate || v == VisibilityInternal || v == VisibilityPublic
}

// Principal is who a request acts for: a user (or a robot account),
// through one credential that carries scopes. Effective permission on a
// repository is the scopes ∩ (the organization role ∪ the repository
// grants), narrowed by the credential's repository patterns and, for a
// robot, its permissions (CONTRACT §18 "Access", decision 4).
type Principal struct {
	// User is the account. For a robot it is a stand-in that is never
	// stored: ID the robot's ID, Email its user name (robot$ORG+NAME), so
	// audit entries and events name the robot.
	User *User
	// CredentialID identifies the API key, OAuth grant, robot or
	// exchanged credential (see RateKey for what the global rate limit is
	// keyed by).
	CredentialID string
	// Scopes the credential carries. A robot's are repo:read for pull and
	// repo:write for push or delete.
	Scopes Scopes
	// OAuth is set when the credential is an OAuth access token, which a
	// third-party application holds on the user's behalf.
	OAuth bool
	// OAuthClient is the client_id of the application holding an OAuth
	// access token ("" for other credentials).
	OAuthClient string
	// OrgRoles maps organization name to the user's role there (the highest
	// over the user's teams in it, and owner for its creator).
	OrgRoles map[string]Role
	// Grants maps a repository's ID to the strongest role the repository
	// grants give the user there: their own and their teams' (see
	// AccessStore.GrantsFor).
	Grants map[string]RepoRole
	// Repositories, when not nil, limits the credential to the
	// repositories whose names match one of these patterns (MatchRepo): a
	// repository it does not name is seen as an anonymous caller sees it.
	// Set for repository-restricted API keys and robots.
	Repositories []string
	// Robot is set when the credential is a robot account's secret or a
	// credential exchanged for one at /v1/oidc/token.
	Robot *Robot
	// PublisherID is the trusted publisher whose token was exchanged for
	// this credential ("" for other credentials).
	PublisherID string
}

// RateKey is the key of the principal's global rate-limit bucket: the API
// key for a key, the (user, OAuth client) pair for an OAuth access token,
// so every grant a user gives one application shares one budget (a new
// grant is not a new budget), and the robot for a robot's secret and the
// credentials exchanged for it (decision 8).
func (p *Principal) RateKey() string {
	if p.Robot != nil {
		return "robot:" + p.Robot.ID
	}
	if p.OAuth && p.OAuthClient != "" && p.User != nil {
		return "oauth:" + p.User.ID + ":" + p.OAuthClient
	}
	return p.CredentialID
}

// RoleIn returns the principal's role in org ("" when none).
func (p *Principal) RoleIn(org string) Role {
	if p == nil || org == "" {
		return ""
	}
	return p.OrgRoles[org]
}

// IsAdmin reports whether the principal is a server admin.
func (p *Principal) IsAdmin() bool {
	return p != nil && p.User != nil && p.User.Admin && p.Robot == nil
}

// IsHuman reports whether p is a signed-in user, not a robot account or a
// credential exchanged for one: who may read an internal repository.
func (p *Principal) IsHuman() bool { return p != nil && p.User != nil && p.Robot == nil }

// Names reports whether the credential's repository patterns (if any)
// name r: a restricted key or a robot acts on r only then (a robot only
// on the repositories of its organization).
func (p *Principal) Names(r *Repository) bool {
	if p == nil {
		return false
	}
	if p.Robot != nil && r.Organization != p.Robot.Organization {
		return false
	}
	return p.Repositories == nil || MatchRepo(p.Repositories, r.Name)
}

// RepoRole returns the role p holds on r, ignoring scopes: the stronger
// of the role p's organization role maps to (OrgRoleToRepoRole; admin for
// the owner of a personal repository and for server admins) and p's
// repository grants there. A credential whose patterns do not name r has
// none; a robot has the role its permissions give (RobotPermissions.Role).
func (p *Principal) RepoRole(r *Repository) RepoRole {
	if p == nil || p.User == nil || !p.Names(r) {
		return ""
	}
	if p.Robot != nil {
		return p.Robot.Permissions.Role()
	}
	if p.User.Admin {
		return RepoRoleAdmin
	}
	var role RepoRole
	if r.Organization == "" {
		if r.OwnerID == p.User.ID {
			role = RepoRoleAdmin
		}
	} else {
		role = OrgRoleToRepoRole(p.RoleIn(r.Organization))
	}
	return role.Max(p.Grants[r.ID])
}

// CanSeeRepo reports whether p may know r exists (roles only; scopes are
// checked separately so a missing scope is 403, not 404): public ones
// everybody, internal ones every signed-in human whose credential names
// them, the rest those with a role there.
func (p *Principal) CanSeeRepo(r *Repository) bool {
	switch {
	case r.Visibility == VisibilityPublic:
		return true
	case r.Visibility == VisibilityInternal && p.IsHuman() && p.Names(r):
		return true
	}
	return p.RepoRole(r) != ""
}

// Permits reports whether the credential's own limits allow the robot
// permission act on a repository where its role allows it: a robot's
// permissions (push does not imply delete), everything for other
// credentials.
func (p *Principal) Permits(act RobotPermission) bool {
	if p == nil {
		return false
	}
	if p.Robot == nil {
		return true
	}
	return p.Robot.Permissions.Has(act)
}

// CanSeeOrg reports whether p may know org exists.
func (p *Principal) CanSeeOrg(org string) bool {
	return p.IsAdmin() || p.RoleIn(org) != "" || (p != nil && p.Robot != nil && p.Robot.Organization == org)
}

// OrgRole returns p's role in org, owner for admins.
func (p *Principal) OrgRole(org string) Role {
	if p.IsAdmin() {
		return RoleOwner
	}
	return p.RoleIn(org)
}
