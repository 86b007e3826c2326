package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
)

// SignInPolicy is what the server's configuration says about people an
// identity provider signs in.
type SignInPolicy struct {
	// AdminGroup, when set, makes server admins of the members of that
	// group (--oidc-admin-group) and takes admin from those who leave it.
	AdminGroup string
}

// LinkConflict is the refusal of a first IdP sign-in whose email belongs
// to an account that may not be linked to it (CONTRACT §18 decision 1).
// Its message names the conflict and what to do.
type LinkConflict struct {
	Email string
	// Kind of the existing account: "local", or the provider it is bound
	// to.
	Kind string
}

func (e *LinkConflict) Error() string {
	if e.Kind == chartctl.ProviderLocal {
		return fmt.Sprintf("A local chartctl account already uses the email %s, so this sign-in cannot create another one or take it over. Sign in with that account's password, or ask an administrator to delete or rename it first.", e.Email)
	}
	return fmt.Sprintf("The email %s already belongs to an account bound to another sign-in (%s). Sign in that way, or ask an administrator to resolve the conflict.", e.Email, e.Kind)
}

// SignInExternal finds the user bound to the identity provider's account
// c vouches for, or creates it just in time, keeping its email and (with
// policy.AdminGroup) its admin flag current. A first sign-in whose email
// is taken links only to an unbound SCIM-provisioned account, and only
// with a verified email; any other collision is a *LinkConflict
// (decision 1). A disabled user is refused with EFORBIDDEN.
func (a *App) SignInExternal(ctx context.Context, c *identity.Claims, policy SignInPolicy) (*chartctl.User, error) {
	id := chartctl.Identity{Provider: c.Provider, Issuer: c.Issuer, Subject: c.Subject}
	email, err := ValidateEmail(c.Email)
	if err != nil {
		return nil, chartctl.Errorf(chartctl.EINVALID, "The identity provider sent an email chartctl cannot use (%q).", c.Email)
	}
	admin := policy.AdminGroup != "" && slices.Contains(c.Groups, policy.AdminGroup)
	u, err := a.Store.UserByIdentity(ctx, id)
	if (err != nil || !strings.EqualFold(u.Email, email)) && !c.EmailVerified {
		// Memberships recorded for an email are never granted through an
		// unverified one (decision 1): the account cannot take an email
		// that teams are waiting for until the provider verifies it.
		if err := a.refuseUnverifiedMemberships(ctx, email); err != nil {
			return nil, err
		}
	}
	switch {
	case err == nil:
	case chartctl.ErrorCode(err) != chartctl.ENOTFOUND:
		return nil, err
	default:
		u, err = a.linkOrCreate(ctx, id, c, email, admin)
		if err != nil {
			return nil, err
		}
	}
	if u.Disabled {
		return nil, chartctl.Errorf(chartctl.EFORBIDDEN, "This account is disabled. Ask an administrator to enable it.")
	}
	u, err = a.updateSignedIn(ctx, u, email, admin, policy)
	if err != nil {
		return nil, err
	}
	// Team sync: the groups of this sign-in set the user's bound teams.
	if err := a.SyncSignInGroups(ctx, u, c.Groups); err != nil {
		return nil, err
	}
	return u, nil
}

// updateSignedIn keeps the email and (with policy.AdminGroup) the admin
// flag of the signed-in user u current.
func (a *App) updateSignedIn(ctx context.Context, u *chartctl.User, email string, admin bool, policy SignInPolicy) (*chartctl.User, error) {
	var upd chartctl.UserUpdate
	if !strings.EqualFold(u.Email, email) {
		upd.Email = &email
	}
	if policy.AdminGroup != "" && u.Admin != admin {
		upd.Admin = &admin
	}
	if upd.Email == nil && upd.Admin == nil {
		return u, nil
	}
	nu, err := a.Store.UpdateUser(a.Record(ctx, "user.update", u.Email, ""), u.ID, upd)
	if err == nil {
		return nu, nil
	}
	// The sign-in still succeeds when the email is another account's
	// now, or when leaving the admin group would leave no admin: the
	// user keeps what they had, and the log says why.
	if chartctl.ErrorCode(err) == chartctl.ECONFLICT {
		a.Logger.Warn("identity provider sign-in: user not updated", "user", u.ID, "err", chartctl.ErrorMessage(err))
		return u, nil
	}
	return nil, err
}

// refuseUnverifiedMemberships refuses, with EFORBIDDEN, an unverified
// email that team memberships are recorded for.
func (a *App) refuseUnverifiedMemberships(ctx context.Context, email string) error {
	roles, err := a.Store.OrgRoles(ctx, "", email)
	if err != nil {
		return err
	}
	if len(roles) > 0 {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Teams are waiting for %s, but the identity provider has not verified that email. Verify it at the identity provider, then sign in again.", email)
	}
	return nil
}

// linkOrCreate handles the first sign-in of the IdP account id.
func (a *App) linkOrCreate(ctx context.Context, id chartctl.Identity, c *identity.Claims, email string, admin bool) (*chartctl.User, error) {
	existing, err := a.Store.UserByEmail(ctx, email)
	switch {
	case chartctl.ErrorCode(err) == chartctl.ENOTFOUND:
		u := &chartctl.User{Email: email, Admin: admin, Identity: id, CreatedAt: a.Now().UTC()}
		if err := a.Store.CreateUser(a.Record(ctx, "user.create", email, ""), u); err != nil {
			return nil, err
		}
		return u, nil
	case err != nil:
		return nil, err
	}
	// Only an account SCIM provisioned and no sign-in has bound yet is
	// this person's, and only when the provider verified the email.
	if existing.Identity.Provider == chartctl.ProviderSCIM && c.EmailVerified {
		return a.Store.UpdateUser(a.Record(ctx, "user.update", email, ""), existing.ID, chartctl.UserUpdate{Identity: &id})
	}
	return nil, &LinkConflict{Email: email, Kind: existing.Identity.ProviderName()}
}

// RefusePassword refuses to give u a password when an identity provider
// signs them in: their password lives there (CONTRACT §18 decision 7).
func RefusePassword(u *chartctl.User) error {
	if u.Identity.Local() {
		return nil
	}
	return chartctl.Invalid("password", "%s signs in through an identity provider (%s): their password is managed there, not in chartctl.", u.Email, u.Identity.Provider)
}
