package app

import (
	"context"
	"slices"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds team sync (CONTRACT §18 "Sign-in", decision 7): a team
// bound to identity provider groups takes its members from the IdP alone.
// Where a SCIM client pushes groups, its groups decide; otherwise the
// groups claim of each sign-in does, and the refresh of an OAuth grant
// applies the groups of the user's last sign-in again. Synced members
// join as member; every change is a team.member_add or team.member_remove
// audit entry with its team.member_added or team.member_removed event,
// exactly as a change by hand.

// BoundTeamRefusal is the ECONFLICT for a member added by hand to a team
// bound to identity provider groups.
func BoundTeamRefusal(t *chartctl.Team) error {
	return chartctl.Errorf(chartctl.ECONFLICT, "Team %q is bound to the identity provider groups %s: the identity provider owns its members. Add the person to one of those groups there, or unbind the team first (chartctl team set-idp-groups %s, with no group).",
		t.Name, strings.Join(t.IDPGroups, ", "), t.Name)
}

// SCIMManagesGroups reports whether a SCIM client pushes groups to this
// server (it has pushed at least one): then SCIM alone sets bound-team
// membership and groups claims at sign-in are ignored.
func (a *App) SCIMManagesGroups(ctx context.Context) (bool, error) {
	gs, err := a.Store.SCIMGroups(ctx)
	return len(gs) > 0, err
}

// membershipsChanged tells the transports to drop cached credentials,
// whose organization roles came from the memberships just changed.
func (a *App) membershipsChanged() {
	if a.OnMemberships != nil {
		a.OnMemberships()
	}
}

// SyncSignInGroups sets u's memberships in bound teams from the groups
// an identity provider listed at sign-in (nil: the claim was absent, which
// removes every bound-team membership) and remembers them for the
// refreshes of u's OAuth grants. Where SCIM pushes groups, the claim is
// ignored (decision 7).
func (a *App) SyncSignInGroups(ctx context.Context, u *chartctl.User, groups []string) error {
	scim, err := a.SCIMManagesGroups(ctx)
	if err != nil || scim {
		return err
	}
	groups, err = chartctl.NormalizeIDPGroups("groups", groups)
	if err != nil {
		// A provider listing absurd groups does not stop the sign-in;
		// the groups that cannot be kept are ignored, as if absent.
		a.Logger.Warn("identity provider groups ignored", "user", u.ID, "err", chartctl.ErrorMessage(err))
		groups = nil
	}
	if !slices.Equal(groups, u.IDPGroups) {
		g := groups
		if g == nil {
			g = []string{}
		}
		nu, err := a.Store.UpdateUser(ctx, u.ID, chartctl.UserUpdate{IDPGroups: &g})
		if err != nil {
			return err
		}
		*u = *nu
	}
	return a.syncUser(ctx, u, groups)
}

// RefreshGroups applies again, at the refresh of an OAuth grant of the
// user userID, the groups of their last IdP sign-in: a team bound since
// then takes them in. chartctl never holds the IdP's refresh token, so
// it cannot ask the IdP; a change at the IdP reaches the teams at the
// next sign-in, or at once through SCIM. Local users are left alone.
func (a *App) RefreshGroups(ctx context.Context, userID string) error {
	u, err := a.Store.User(ctx, userID)
	if err != nil {
		return err
	}
	if u.Identity.Local() || u.Identity.Provider == chartctl.ProviderSCIM {
		return nil
	}
	scim, err := a.SCIMManagesGroups(ctx)
	if err != nil || scim {
		return err
	}
	return a.syncUser(ctx, u, u.IDPGroups)
}

// syncUser sets u's membership in every bound team: a member exactly
// where one of groups binds the team.
func (a *App) syncUser(ctx context.Context, u *chartctl.User, groups []string) error {
	teams, err := a.Store.Teams(ctx, "")
	if err != nil {
		return err
	}
	changed := false
	for _, t := range teams {
		if !t.Bound() {
			continue
		}
		c, err := a.setMembership(ctx, t, u.Email, t.MatchesGroups(groups))
		if err != nil {
			return err
		}
		changed = changed || c
	}
	if changed {
		a.membershipsChanged()
	}
	return nil
}

// setMembership makes email a member of t (role member) or not.
func (a *App) setMembership(ctx context.Context, t *chartctl.Team, email string, want bool) (bool, error) {
	_, err := a.Store.Member(ctx, t.Name, email)
	have := err == nil
	if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return false, err
	}
	switch {
	case want && !have:
		err = a.AddMember(ctx, t, &chartctl.Member{Team: t.Name, Email: email, Role: chartctl.RoleMember})
	case !want && have:
		_, err = a.RemoveMember(ctx, t, email)
	default:
		return false, nil
	}
	// A concurrent sync of the same user may have done it first.
	if c := chartctl.ErrorCode(err); c == chartctl.ECONFLICT || c == chartctl.ENOTFOUND {
		return false, nil
	}
	return err == nil, err
}

// SetTeamIDPGroups binds t, which the caller may manage, to groups (none:
// unbinds it, and its members stay as members by hand). Binding a team
// that was not bound removes the members added by hand (as GitHub's team
// sync does), then syncs it at once from what chartctl knows: the SCIM
// groups, or the groups of each IdP user's last sign-in.
func (a *App) SetTeamIDPGroups(ctx context.Context, t *chartctl.Team, groups []string) (*chartctl.Team, error) {
	groups, err := chartctl.NormalizeIDPGroups("idp_groups", groups)
	if err != nil {
		return nil, err
	}
	wasBound := t.Bound()
	nt, err := a.Store.SetTeamIDPGroups(a.Record(ctx, "team.update", t.Name, t.Organization), t.Name, groups)
	if err != nil {
		return nil, err
	}
	if !nt.Bound() {
		return nt, nil
	}
	if !wasBound {
		ms, err := a.Store.Members(ctx, nt.Name)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if _, err := a.RemoveMember(ctx, nt, m.ID); err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				return nil, err
			}
		}
		a.membershipsChanged()
	}
	if err := a.SyncTeam(ctx, nt); err != nil {
		return nil, err
	}
	return a.Store.Team(ctx, nt.Name)
}

// SyncTeam sets the members of the bound team t from what chartctl
// knows of the IdP's groups: the SCIM groups that bind it where SCIM
// pushes groups, otherwise the groups of each IdP user's last sign-in.
func (a *App) SyncTeam(ctx context.Context, t *chartctl.Team) error {
	if !t.Bound() {
		return nil
	}
	want, err := a.boundMembers(ctx, t)
	if err != nil {
		return err
	}
	ms, err := a.Store.Members(ctx, t.Name)
	if err != nil {
		return err
	}
	changed := false
	for _, m := range ms {
		if !want[strings.ToLower(m.Email)] {
			c, err := a.setMembership(ctx, t, m.Email, false)
			if err != nil {
				return err
			}
			changed = changed || c
		}
		delete(want, strings.ToLower(m.Email))
	}
	emails := make([]string, 0, len(want))
	for e := range want {
		emails = append(emails, e)
	}
	slices.Sort(emails)
	for _, e := range emails {
		c, err := a.setMembership(ctx, t, e, true)
		if err != nil {
			return err
		}
		changed = changed || c
	}
	if changed {
		a.membershipsChanged()
	}
	return nil
}

// SyncBoundTeams syncs every bound team (SyncTeam): after a SCIM client
// changed a group.
func (a *App) SyncBoundTeams(ctx context.Context) error {
	teams, err := a.Store.Teams(ctx, "")
	if err != nil {
		return err
	}
	for _, t := range teams {
		if err := a.SyncTeam(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// boundMembers returns the lower-cased emails of the users the IdP puts
// in the bound team t.
func (a *App) boundMembers(ctx context.Context, t *chartctl.Team) (map[string]bool, error) {
	want := map[string]bool{}
	gs, err := a.Store.SCIMGroups(ctx)
	if err != nil {
		return nil, err
	}
	users, err := a.Store.Users(ctx)
	if err != nil {
		return nil, err
	}
	if len(gs) > 0 {
		byID := map[string]*chartctl.User{}
		for _, u := range users {
			byID[u.ID] = u
		}
		for _, g := range gs {
			if !t.MatchesGroups(g.Names()) {
				continue
			}
			for _, id := range g.Members {
				if u := byID[id]; u != nil {
					want[strings.ToLower(u.Email)] = true
				}
			}
		}
		return want, nil
	}
	for _, u := range users {
		if !u.Identity.Local() && u.Identity.Provider != chartctl.ProviderSCIM && t.MatchesGroups(u.IDPGroups) {
			want[strings.ToLower(u.Email)] = true
		}
	}
	return want, nil
}
