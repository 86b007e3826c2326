package chartctl

import (
	"context"
	"slices"
	"strings"
	"time"
)

// SCIMToken is the bearer credential of a SCIM client (an identity
// provider provisioning users and groups). Only a hash of its value is
// stored.
type SCIMToken struct {
	ID        string
	Name      string
	Hash      []byte
	CreatedBy string
	CreatedAt time.Time
	// LastUsedAt is when a SCIM request last presented it, nil if never.
	LastUsedAt *time.Time
}

// SCIMGroup is a group a SCIM client pushed. Teams bound to its
// DisplayName, ExternalID or ID (Team.IDPGroups) take their members from
// it.
type SCIMGroup struct {
	ID          string
	DisplayName string
	ExternalID  string
	// Members are the IDs of the users in the group, sorted.
	Members   []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Names are the values a team binding matches the group by: its display
// name, external id and id.
func (g *SCIMGroup) Names() []string {
	out := []string{g.DisplayName, g.ID}
	if g.ExternalID != "" {
		out = append(out, g.ExternalID)
	}
	return out
}

// MatchesGroups reports whether any of names (the groups an identity
// provider lists for a user) binds t: group names compare exactly, as
// IdPs send them, ids included (decision 7).
func (t *Team) MatchesGroups(names []string) bool {
	for _, g := range t.IDPGroups {
		if slices.Contains(names, g) {
			return true
		}
	}
	return false
}

// NormalizeIDPGroups trims groups, drops empty and repeated ones and
// sorts them. Returns EINVALID naming param for an over-long list or name.
func NormalizeIDPGroups(param string, groups []string) ([]string, error) {
	var out []string
	for _, g := range groups {
		g = strings.TrimSpace(g)
		if g == "" || slices.Contains(out, g) {
			continue
		}
		if len(g) > 256 || strings.ContainsRune(g, 0) {
			return nil, Invalid(param, "Invalid group %q: a group name or id is 1-256 characters without NUL.", g)
		}
		out = append(out, g)
	}
	if len(out) > 50 {
		return nil, Invalid(param, "A team can be bound to at most 50 groups.")
	}
	slices.Sort(out)
	return out, nil
}

// SCIMStore keeps SCIM tokens and groups. Mutating methods write the
// Change their context carries in the same transaction.
type SCIMStore interface {
	// CreateSCIMToken stores t, filling ID and CreatedAt when empty.
	CreateSCIMToken(ctx context.Context, t *SCIMToken) error
	// SCIMTokens returns every token, oldest first.
	SCIMTokens(ctx context.Context) ([]*SCIMToken, error)
	// SCIMTokenByHash returns the token with this hash. Returns ENOTFOUND.
	SCIMTokenByHash(ctx context.Context, hash []byte) (*SCIMToken, error)
	// TouchSCIMToken records that the token id was used at t; an unknown
	// id is ignored.
	TouchSCIMToken(ctx context.Context, id string, t time.Time) error
	// DeleteSCIMToken deletes the token id. Returns ENOTFOUND.
	DeleteSCIMToken(ctx context.Context, id string) error

	// PutSCIMGroup creates g (ID and CreatedAt filled when empty) or
	// replaces the group with its ID. Returns ECONFLICT if another group
	// has its display name.
	PutSCIMGroup(ctx context.Context, g *SCIMGroup) error
	// SCIMGroup returns the group id. Returns ENOTFOUND.
	SCIMGroup(ctx context.Context, id string) (*SCIMGroup, error)
	// SCIMGroups returns every group, by display name.
	SCIMGroups(ctx context.Context) ([]*SCIMGroup, error)
	// DeleteSCIMGroup deletes the group id. Returns ENOTFOUND.
	DeleteSCIMGroup(ctx context.Context, id string) error
}
