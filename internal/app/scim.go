package app

import (
	"context"
	"slices"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

// This file holds what a SCIM client (an identity provider provisioning
// users and groups, CONTRACT §18 decision 14) may do, whatever the
// transport: its bearer tokens, the users it manages (every account an
// identity provider signs in or SCIM created; local accounts are beyond
// its reach, so a directory cannot lock out the break-glass admin) and
// the groups that set bound teams.

// CreateSCIMToken makes a SCIM bearer token for an admin (createdBy) and
// returns its value, shown once; only its hash is stored.
func (a *App) CreateSCIMToken(ctx context.Context, name, createdBy string) (string, *chartctl.SCIMToken, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "scim"
	}
	if len(name) > MaxNameLength {
		return "", nil, chartctl.Invalid("name", "name is too long: give the token a name of at most %d characters.", MaxNameLength)
	}
	value, hash := token.New(token.SCIMTokenPrefix)
	t := &chartctl.SCIMToken{ID: NewID("scim_"), Name: name, Hash: hash, CreatedBy: createdBy, CreatedAt: a.Now().UTC()}
	if err := a.Store.CreateSCIMToken(a.Record(ctx, "scim_token.create", t.ID, ""), t); err != nil {
		return "", nil, err
	}
	return value, t, nil
}

// RevokeSCIMToken deletes the token id: the SCIM client using it is
// refused from its next request. Returns ENOTFOUND.
func (a *App) RevokeSCIMToken(ctx context.Context, id string) error {
	return a.Store.DeleteSCIMToken(a.Record(ctx, "scim_token.revoke", id, ""), id)
}

// AuthenticateSCIM returns the SCIM token value is, or EUNAUTHORIZED.
func (a *App) AuthenticateSCIM(ctx context.Context, value string) (*chartctl.SCIMToken, error) {
	refused := chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid or revoked SCIM token: create one with `chartctl admin scim-token create` and configure it at the identity provider.")
	if !token.Valid(token.SCIMTokenPrefix, value) {
		return nil, refused
	}
	t, err := a.Store.SCIMTokenByHash(ctx, token.Hash(value))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, refused
	} else if err != nil {
		return nil, err
	}
	if err := a.Store.TouchSCIMToken(ctx, t.ID, a.Now()); err != nil {
		a.Logger.Warn("scim token last use not recorded", "err", err)
	}
	return t, nil
}

// SCIMManaged reports whether SCIM may see and change u: any account but
// a local one.
func SCIMManaged(u *chartctl.User) bool { return !u.Identity.Local() }

// SCIMUser returns the user id if SCIM manages it, else ENOTFOUND.
func (a *App) SCIMUser(ctx context.Context, id string) (*chartctl.User, error) {
	u, err := a.Store.User(ctx, id)
	if err == nil && !SCIMManaged(u) {
		err = chartctl.Errorf(chartctl.ENOTFOUND, "User not found.")
	}
	return u, err
}

// SCIMUsers returns the users SCIM manages, by email.
func (a *App) SCIMUsers(ctx context.Context) ([]*chartctl.User, error) {
	all, err := a.Store.Users(ctx)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(all, func(u *chartctl.User) bool { return !SCIMManaged(u) })
	slices.SortFunc(out, func(x, y *chartctl.User) int { return strings.Compare(x.Email, y.Email) })
	return out, nil
}

// ProvisionUser creates a user for the SCIM client: bound to provider
// "scim" until its first IdP sign-in links it (decision 1). Returns
// ECONFLICT when the email is taken.
func (a *App) ProvisionUser(ctx context.Context, email, externalID string, active bool) (*chartctl.User, error) {
	email, err := ValidateEmail(email)
	if err != nil {
		return nil, chartctl.Invalid("userName", "userName must be the person's email address (got %q).", email)
	}
	subject := externalID
	if subject == "" {
		subject = email
	}
	u := &chartctl.User{Email: email, Disabled: !active, CreatedAt: a.Now().UTC(),
		Identity: chartctl.Identity{Provider: chartctl.ProviderSCIM, Subject: subject}}
	if err := a.Store.CreateUser(a.Record(ctx, "user.create", email, ""), u); err != nil {
		if chartctl.ErrorCode(err) == chartctl.ECONFLICT {
			return nil, chartctl.Errorf(chartctl.ECONFLICT, "A user with userName %q already exists.", email)
		}
		return nil, err
	}
	return u, nil
}

// UpdateSCIMUser changes the email and the active flag of u, which SCIM
// manages (nil: unchanged). Deactivating runs the offboarding: sessions,
// OAuth grants and API keys end in the same transaction.
func (a *App) UpdateSCIMUser(ctx context.Context, u *chartctl.User, email *string, active *bool) (*chartctl.User, error) {
	var upd chartctl.UserUpdate
	if email != nil {
		e, err := ValidateEmail(*email)
		if err != nil {
			return nil, chartctl.Invalid("userName", "userName must be the person's email address (got %q).", *email)
		}
		if !strings.EqualFold(e, u.Email) {
			upd.Email = &e
		}
	}
	if active != nil && *active == u.Disabled {
		disabled := !*active
		upd.Disabled = &disabled
	}
	if upd.Email == nil && upd.Disabled == nil {
		return u, nil
	}
	nu, err := a.Store.UpdateUser(a.Record(ctx, "user.update", u.Email, ""), u.ID, upd)
	if err != nil {
		return nil, err
	}
	a.membershipsChanged()
	return nu, nil
}

// DeleteSCIMUser deletes u, which SCIM manages, as an admin's deletion
// does: memberships and credentials go.
func (a *App) DeleteSCIMUser(ctx context.Context, u *chartctl.User) error {
	if err := a.Store.DeleteUser(a.Record(ctx, "user.delete", u.Email, ""), u.ID); err != nil {
		return err
	}
	a.membershipsChanged()
	return nil
}

// PutSCIMGroup creates or replaces a group the SCIM client pushed, after
// checking that its members are users SCIM manages, then syncs every
// bound team from the SCIM groups (SCIM alone sets them from now on).
// Returns EINVALID naming members for an unknown member, ECONFLICT for a
// display name another group has.
func (a *App) PutSCIMGroup(ctx context.Context, g *chartctl.SCIMGroup) error {
	if strings.TrimSpace(g.DisplayName) == "" || len(g.DisplayName) > 256 {
		return chartctl.Invalid("displayName", "displayName is required (1-256 characters).")
	}
	for _, id := range g.Members {
		if _, err := a.SCIMUser(ctx, id); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return chartctl.Invalid("members", "Member %q is not a user provisioned here: create it through /scim/v2/Users first.", id)
		} else if err != nil {
			return err
		}
	}
	if g.UpdatedAt = a.Now().UTC(); g.CreatedAt.IsZero() {
		g.CreatedAt = g.UpdatedAt
	}
	if err := a.Store.PutSCIMGroup(a.Record(ctx, "scim_group.put", g.DisplayName, ""), g); err != nil {
		return err
	}
	return a.SyncBoundTeams(ctx)
}

// DeleteSCIMGroup deletes the group id and syncs the bound teams.
// Returns ENOTFOUND.
func (a *App) DeleteSCIMGroup(ctx context.Context, id string) error {
	g, err := a.Store.SCIMGroup(ctx, id)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteSCIMGroup(a.Record(ctx, "scim_group.delete", g.DisplayName, ""), id); err != nil {
		return err
	}
	return a.SyncBoundTeams(ctx)
}
