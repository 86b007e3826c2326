package bolt

import (
	"bytes"
	"context"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateTeam stores t, filling ID and CreatedAt when empty; MemberCount
// starts at zero. It returns EINVALID for an invalid name, ECONFLICT if the
// name is taken and ENOTFOUND if the organization does not exist.
func (db *DB) CreateTeam(ctx context.Context, t *chartctl.Team) error {
	if err := chartctl.ValidateName("name", t.Name); err != nil {
		return err
	}
	if err := db.fill(&t.ID, prefixTeam, &t.CreatedAt); err != nil {
		return err
	}
	t.MemberCount = 0
	groups, err := chartctl.NormalizeIDPGroups("idp_groups", t.IDPGroups)
	if err != nil {
		return err
	}
	t.IDPGroups = groups
	return wrap("create team", db.update(ctx, func(tx *bbolt.Tx) error {
		teams := bucket(tx, teamsBucket)
		if teams.Get([]byte(t.Name)) != nil {
			return nameNotAvailable(t.Name)
		}
		if t.Organization == "" || bucket(tx, orgsBucket).Get([]byte(t.Organization)) == nil {
			return orgNotFound(t.Organization)
		}
		v, err := encode(newTeamRecord(t))
		if err != nil {
			return err
		}
		if err := teams.Put([]byte(t.Name), v); err != nil {
			return err
		}
		if err := bucket(tx, orgTeamsBucket).Put(key(t.Organization, t.Name), nil); err != nil {
			return err
		}
		members := bucket(tx, membersBucket)
		if members.Bucket([]byte(t.Name)) != nil {
			if err := members.DeleteBucket([]byte(t.Name)); err != nil {
				return err
			}
		}
		_, err = members.CreateBucket([]byte(t.Name))
		return err
	}))
}

// Team returns the team named name, with its member count. It returns
// ENOTFOUND if none.
func (db *DB) Team(ctx context.Context, name string) (*chartctl.Team, error) {
	var t *chartctl.Team
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := getTeam(tx, name)
		if err != nil {
			return err
		}
		t = r.domain()
		return nil
	})
	return t, wrap("get team", err)
}

// Teams returns the teams of org ("" for all), by name. An unknown
// organization has no teams.
func (db *DB) Teams(ctx context.Context, org string) ([]*chartctl.Team, error) {
	var out []*chartctl.Team
	err := db.db.View(func(tx *bbolt.Tx) error {
		add := func(v []byte) error {
			r, err := decode[teamRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		}
		teams := bucket(tx, teamsBucket)
		if org == "" {
			return teams.ForEach(func(_, v []byte) error { return add(v) })
		}
		pfx := prefix(org)
		return scanPrefix(bucket(tx, orgTeamsBucket), pfx, func(k, _ []byte) error {
			v := teams.Get(k[len(pfx):])
			if v == nil {
				return nil
			}
			return add(v)
		})
	})
	if err != nil {
		return nil, wrap("list teams", err)
	}
	return out, nil
}

// SetTeamIDPGroups replaces the groups team is bound to. It returns
// EINVALID for a bad group and ENOTFOUND if the team does not exist.
func (db *DB) SetTeamIDPGroups(ctx context.Context, team string, groups []string) (*chartctl.Team, error) {
	groups, err := chartctl.NormalizeIDPGroups("idp_groups", groups)
	if err != nil {
		return nil, err
	}
	var out *chartctl.Team
	err = db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getTeam(tx, team)
		if err != nil {
			return err
		}
		r.IDPGroups = groups
		if err := putTeam(tx, r); err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("set team groups", err)
}

// AddMember adds m to team m.Team, filling ID and AddedAt when empty and
// Role (member) when empty. It returns EINVALID for a missing email or an
// unknown role, ENOTFOUND if the team does not exist and ECONFLICT if the
// email (compared case-insensitively) is already a member.
func (db *DB) AddMember(ctx context.Context, m *chartctl.Member) error {
	email := lowerEmail(m.Email)
	if email == "" || strings.Contains(email, sep) {
		return chartctl.Invalid("email", "A valid email is required.")
	}
	if m.Role == "" {
		m.Role = chartctl.RoleMember
	}
	if !m.Role.Valid() {
		return invalidRole(m.Role)
	}
	if err := db.fill(&m.ID, prefixMember, &m.AddedAt); err != nil {
		return err
	}
	return wrap("add member", db.update(ctx, func(tx *bbolt.Tx) error {
		team, err := getTeam(tx, m.Team)
		if err != nil {
			return err
		}
		mb := bucket(tx, membersBucket).Bucket([]byte(team.Name))
		if mb.Get([]byte(email)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "%s is already a member of team %q.", m.Email, team.Name)
		}
		ids := bucket(tx, memberIDsBucket)
		if ids.Get([]byte(m.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A member with ID %q already exists.", m.ID)
		}
		if err := putMember(tx, team, email, newMemberRecord(m)); err != nil {
			return err
		}
		if err := ids.Put([]byte(m.ID), key(team.Name, email)); err != nil {
			return err
		}
		team.MemberCount++
		return putTeam(tx, team)
	}))
}

// Members returns the team's members, by (lowercased) email. It returns
// ENOTFOUND if the team does not exist.
func (db *DB) Members(ctx context.Context, team string) ([]*chartctl.Member, error) {
	var out []*chartctl.Member
	err := db.db.View(func(tx *bbolt.Tx) error {
		t, err := getTeam(tx, team)
		if err != nil {
			return err
		}
		return bucket(tx, membersBucket).Bucket([]byte(t.Name)).ForEach(func(_, v []byte) error {
			r, err := decode[memberRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list members", err)
	}
	return out, nil
}

// Member returns one member of team, found by member ID or by email
// (case-insensitively). It returns ENOTFOUND if the team or the member
// does not exist.
func (db *DB) Member(ctx context.Context, team, idOrEmail string) (*chartctl.Member, error) {
	var m *chartctl.Member
	err := db.db.View(func(tx *bbolt.Tx) error {
		_, r, err := findMember(tx, team, idOrEmail)
		if err != nil {
			return err
		}
		m = r.domain()
		return nil
	})
	return m, wrap("get member", err)
}

// UpdateMemberRole changes a member's role and returns the member. It
// returns EINVALID for an unknown role and ENOTFOUND if the team or the
// member does not exist.
func (db *DB) UpdateMemberRole(ctx context.Context, team, idOrEmail string, role chartctl.Role) (*chartctl.Member, error) {
	if !role.Valid() {
		return nil, invalidRole(role)
	}
	var m *chartctl.Member
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		t, r, err := findMember(tx, team, idOrEmail)
		if err != nil {
			return err
		}
		r.Role = string(role)
		if err := putMember(tx, t, lowerEmail(r.Email), r); err != nil {
			return err
		}
		m = r.domain()
		return nil
	})
	return m, wrap("update member role", err)
}

// RemoveMember removes a member from team. It returns ENOTFOUND if the team
// or the member does not exist.
func (db *DB) RemoveMember(ctx context.Context, team, idOrEmail string) error {
	return wrap("remove member", db.update(ctx, func(tx *bbolt.Tx) error {
		t, r, err := findMember(tx, team, idOrEmail)
		if err != nil {
			return err
		}
		return removeMember(tx, t, r)
	}))
}

// removeMember deletes membership r of team t with its index entries.
func removeMember(tx *bbolt.Tx, t *teamRecord, r *memberRecord) error {
	email := lowerEmail(r.Email)
	if err := bucket(tx, membersBucket).Bucket([]byte(t.Name)).Delete([]byte(email)); err != nil {
		return err
	}
	if err := bucket(tx, memberIDsBucket).Delete([]byte(r.ID)); err != nil {
		return err
	}
	if err := bucket(tx, emailTeamsBucket).Delete(key(email, t.Name)); err != nil {
		return err
	}
	if t.MemberCount > 0 {
		t.MemberCount--
	}
	return putTeam(tx, t)
}

// findMember returns team and its member with ID or email idOrEmail.
func findMember(tx *bbolt.Tx, team, idOrEmail string) (*teamRecord, *memberRecord, error) {
	t, err := getTeam(tx, team)
	if err != nil {
		return nil, nil, err
	}
	mb := bucket(tx, membersBucket).Bucket([]byte(t.Name))
	email := lowerEmail(idOrEmail)
	if loc := bucket(tx, memberIDsBucket).Get([]byte(idOrEmail)); loc != nil {
		if tn, e, ok := bytes.Cut(loc, []byte(sep)); ok && string(tn) == t.Name {
			email = string(e)
		}
	}
	var v []byte
	if email != "" {
		v = mb.Get([]byte(email))
	}
	if v == nil {
		return nil, nil, chartctl.Errorf(chartctl.ENOTFOUND, "Member %q not found in team %q.", idOrEmail, t.Name)
	}
	r, err := decode[memberRecord](v)
	if err != nil {
		return nil, nil, err
	}
	return t, r, nil
}

// putMember writes member r of team t under its lowercased email, and the
// email→teams entry OrgRoles reads.
func putMember(tx *bbolt.Tx, t *teamRecord, email string, r *memberRecord) error {
	r.Team = t.Name
	v, err := encode(r)
	if err != nil {
		return err
	}
	if err := bucket(tx, membersBucket).Bucket([]byte(t.Name)).Put([]byte(email), v); err != nil {
		return err
	}
	return bucket(tx, emailTeamsBucket).Put(key(email, t.Name), key(t.Organization, r.Role))
}

func getTeam(tx *bbolt.Tx, name string) (*teamRecord, error) {
	v := bucket(tx, teamsBucket).Get([]byte(name))
	if v == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Team %q not found.", name)
	}
	return decode[teamRecord](v)
}

func putTeam(tx *bbolt.Tx, t *teamRecord) error {
	v, err := encode(t)
	if err != nil {
		return err
	}
	return bucket(tx, teamsBucket).Put([]byte(t.Name), v)
}

func invalidRole(r chartctl.Role) error {
	return chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", r)
}
