package client

import "time"

// This file holds the wire types of repository access, robot accounts and
// trusted publishing (CONTRACT §18 "Access").

// The repository visibilities.
const (
	VisibilityPrivate  = "private"
	VisibilityInternal = "internal"
	VisibilityPublic   = "public"
)

// The repository roles, weakest first.
const (
	RepoRoleRead     = "read"
	RepoRoleWrite    = "write"
	RepoRoleMaintain = "maintain"
	RepoRoleAdmin    = "admin"
)

// RepoRoles lists the repository roles, weakest first.
var RepoRoles = []string{RepoRoleRead, RepoRoleWrite, RepoRoleMaintain, RepoRoleAdmin}

// The kinds of a repository grant.
const (
	GrantKindTeam = "team"
	GrantKindUser = "user"
)

// Grant is a team's or a user's role on one repository
// (GET /v1/repositories/:repo/access).
type Grant struct {
	// Kind is GrantKindTeam or GrantKindUser; Name the team's name or the
	// user's email.
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// GrantRequest is the body of POST /v1/repositories/:repo/access: Team or
// User (an email), and the role.
type GrantRequest struct {
	Team string `json:"team,omitempty"`
	User string `json:"user,omitempty"`
	Role string `json:"role"`
}

// Permission is a user's effective role on a repository and what gives it
// (GET /v1/repositories/:repo/permissions?user=EMAIL).
type Permission struct {
	// Role is the strongest role, "" when the user has none (they may
	// still read a public or internal repository: see Via).
	Role string          `json:"role"`
	Via  []PermissionVia `json:"via"`
}

// The kinds of PermissionVia.
const (
	ViaAdmin        = "admin"        // a server admin
	ViaOwner        = "owner"        // the owner of a personal repository
	ViaOrganization = "organization" // the user's role in the organization
	ViaTeam         = "team"         // a grant to one of the user's teams
	ViaUser         = "user"         // a grant to the user
	ViaVisibility   = "visibility"   // read through public or internal visibility
)

// PermissionVia is one source of a permission.
type PermissionVia struct {
	Kind string `json:"kind"`
	// Name is the organization, team, user email or visibility.
	Name string `json:"name"`
	Role string `json:"role"`
}

// The permissions of a robot account.
const (
	RobotPull   = "pull"
	RobotPush   = "push"
	RobotDelete = "delete"
)

// Robot is an organization's robot account
// (GET /v1/organizations/:org/robots/:name). Secret is set only in the
// answers of create and rotate.
type Robot struct {
	Name         string `json:"name"`
	Organization string `json:"organization"`
	// UserName is the basic-auth user name, robot$ORG+NAME.
	UserName     string     `json:"username"`
	Description  string     `json:"description,omitempty"`
	Repositories []string   `json:"repositories"`
	Permissions  []string   `json:"permissions"`
	Disabled     bool       `json:"disabled"`
	ExpiresAt    *time.Time `json:"expires_at"`
	LastUsedAt   *time.Time `json:"last_used_at"`
	// CreatedBy is the email of the user who created it ("" once that
	// account is gone).
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Secret    string    `json:"secret,omitempty"`
}

// CreateRobotRequest is the body of POST /v1/organizations/:org/robots.
type CreateRobotRequest struct {
	Name         string     `json:"name"`
	Description  string     `json:"description,omitempty"`
	Repositories []string   `json:"repositories"`
	Permissions  []string   `json:"permissions"`
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
}

// UpdateRobotRequest is the body of PATCH
// /v1/organizations/:org/robots/:name; unset fields stay.
type UpdateRobotRequest struct {
	Description  *string  `json:"description,omitempty"`
	Repositories []string `json:"repositories,omitempty"`
	Permissions  []string `json:"permissions,omitempty"`
	Disabled     *bool    `json:"disabled,omitempty"`
	// ExpiresAt sets the expiry; an explicit JSON null is not
	// distinguishable here, so use NoExpiry to remove it.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	NoExpiry  bool       `json:"no_expiry,omitempty"`
}

// RotateRobotRequest is the body of POST
// /v1/organizations/:org/robots/:name/rotate. Grace is how long the
// replaced secret keeps working ("10m", "1h"; "" or "0s": not at all).
type RotateRobotRequest struct {
	Grace string `json:"grace,omitempty"`
}

// Publisher is a trusted publisher of a robot
// (GET /v1/organizations/:org/robots/:name/publishers).
type Publisher struct {
	ID       string            `json:"id"`
	Issuer   string            `json:"issuer"`
	Audience string            `json:"audience"`
	Claims   map[string]string `json:"claims"`
	// CreatedBy is the email of the user who added it.
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// PublisherRequest is the body of POST …/robots/:name/publishers.
type PublisherRequest struct {
	Issuer   string            `json:"issuer"`
	Audience string            `json:"audience"`
	Claims   map[string]string `json:"claims"`
}

// The RFC 8693 values of POST /v1/oidc/token.
const (
	TokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
)

// ExchangedToken is the answer of POST /v1/oidc/token: a credential of the
// robot that lives ExpiresIn seconds (at most 900).
type ExchangedToken struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int    `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
}
