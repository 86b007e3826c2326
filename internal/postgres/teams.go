package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

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
	if !storable(t.Organization) {
		return orgNotFound(t.Organization)
	}
	err = db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO teams (id, name, organization, description, created_at, idp_groups)
			VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.Name, t.Organization, text(t.Description), t.CreatedAt, groupCol(t.IDPGroups))
		return err
	})
	switch {
	case isUnique(err, "teams_name_key"):
		return nameNotAvailable(t.Name)
	case isUnique(err, "teams_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A team with ID %q already exists.", t.ID)
	case isForeignKey(err, "teams_organization_fkey"):
		return orgNotFound(t.Organization)
	}
	return db.wrap("create team", err)
}

// teamCols reads a team with its member count, counted from the members
// themselves so that it is exact under concurrent changes.
const teamCols = `t.id, t.name, t.organization, t.description, t.created_at,
	(SELECT count(*) FROM members m WHERE m.team_id = t.id), t.idp_groups`

func scanTeam(row pgx.Row) (*chartctl.Team, error) {
	var t chartctl.Team
	if err := row.Scan(&t.ID, &t.Name, &t.Organization, &t.Description, &t.CreatedAt, &t.MemberCount, &t.IDPGroups); err != nil {
		return nil, err
	}
	t.IDPGroups = groupsOf(t.IDPGroups)
	t.CreatedAt = utc(t.CreatedAt)
	return &t, nil
}

// Team returns the team named name, with its member count. It returns
// ENOTFOUND if none.
func (db *DB) Team(ctx context.Context, name string) (*chartctl.Team, error) {
	if !storable(name) {
		return nil, teamNotFound(name)
	}
	t, err := scanTeam(db.pool.QueryRow(ctx, `SELECT `+teamCols+` FROM teams t WHERE t.name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, teamNotFound(name)
	}
	return t, db.wrap("get team", err)
}

// SetTeamIDPGroups replaces the groups team is bound to. It returns
// EINVALID for a bad group and ENOTFOUND if the team does not exist.
func (db *DB) SetTeamIDPGroups(ctx context.Context, team string, groups []string) (*chartctl.Team, error) {
	groups, err := chartctl.NormalizeIDPGroups("idp_groups", groups)
	if err != nil {
		return nil, err
	}
	if !storable(team) {
		return nil, teamNotFound(team)
	}
	var t *chartctl.Team
	err = db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `UPDATE teams SET idp_groups = $2 WHERE name = $1`, team, groupCol(groups))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return teamNotFound(team)
		}
		t, err = scanTeam(q.QueryRow(ctx, `SELECT `+teamCols+` FROM teams t WHERE t.name = $1`, team))
		return err
	})
	return t, db.wrap("set team groups", err)
}

// Teams returns the teams of org ("" for all), by name. An unknown
// organization has no teams.
func (db *DB) Teams(ctx context.Context, org string) ([]*chartctl.Team, error) {
	if !storable(org) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+teamCols+` FROM teams t
		WHERE $1 = '' OR t.organization = $1 ORDER BY t.name`, org)
	if err != nil {
		return nil, db.wrap("list teams", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Team, error) { return scanTeam(r) })
	return out, db.wrap("list teams", err)
}

// AddMember adds m to team m.Team, filling ID and AddedAt when empty and
// Role (member) when empty. It returns EINVALID for a missing email or an
// unknown role, ENOTFOUND if the team does not exist and ECONFLICT if the
// email (compared case-insensitively) is already a member.
func (db *DB) AddMember(ctx context.Context, m *chartctl.Member) error {
	email := lowerEmail(m.Email)
	if email == "" || !storable(email) {
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
	if !storable(m.Team) {
		return teamNotFound(m.Team)
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `INSERT INTO members (id, team_id, email, email_key, role, added_at)
			SELECT $1, id, $3, $4, $5, $6 FROM teams WHERE name = $2`,
			m.ID, m.Team, text(m.Email), email, string(m.Role), m.AddedAt)
		if err == nil && tag.RowsAffected() == 0 {
			return teamNotFound(m.Team)
		}
		return err
	})
	switch {
	case isUnique(err, "members_team_email"):
		return chartctl.Errorf(chartctl.ECONFLICT, "%s is already a member of team %q.", m.Email, m.Team)
	case isUnique(err, "members_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A member with ID %q already exists.", m.ID)
	case isForeignKey(err, "members_team_id_fkey"):
		// The team was deleted between the select and the insert.
		return teamNotFound(m.Team)
	}
	return db.wrap("add member", err)
}

const memberCols = `m.id, t.name, m.email, m.role, m.added_at`

func scanMember(row pgx.Row) (*chartctl.Member, error) {
	var (
		m    chartctl.Member
		role string
	)
	if err := row.Scan(&m.ID, &m.Team, &m.Email, &role, &m.AddedAt); err != nil {
		return nil, err
	}
	m.Role, m.AddedAt = chartctl.Role(role), utc(m.AddedAt)
	return &m, nil
}

// Members returns the team's members, by (lowercased) email. It returns
// ENOTFOUND if the team does not exist.
func (db *DB) Members(ctx context.Context, team string) ([]*chartctl.Member, error) {
	var out []*chartctl.Member
	err := db.readTx(ctx, "list members", func(tx pgx.Tx) error {
		id, err := teamID(ctx, tx, team)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+memberCols+` FROM members m JOIN teams t ON t.id = m.team_id
			WHERE m.team_id = $1 ORDER BY m.email_key`, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Member, error) { return scanMember(r) })
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// memberWhere finds a member of team $1 by member ID or email $2; an ID
// match wins, as in bolt.
const memberWhere = `t.name = $1 AND (m.id = $2 OR m.email_key = $3)`

// Member returns one member of team, found by member ID or by email
// (case-insensitively). It returns ENOTFOUND if the team or the member
// does not exist.
func (db *DB) Member(ctx context.Context, team, idOrEmail string) (*chartctl.Member, error) {
	if !storable(team, idOrEmail) {
		return nil, db.memberNotFound(ctx, team, idOrEmail)
	}
	m, err := scanMember(db.pool.QueryRow(ctx, `SELECT `+memberCols+` FROM members m JOIN teams t ON t.id = m.team_id
		WHERE `+memberWhere+` ORDER BY m.id = $2 DESC LIMIT 1`, team, idOrEmail, lowerEmail(idOrEmail)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, db.memberNotFound(ctx, team, idOrEmail)
	}
	return m, db.wrap("get member", err)
}

// UpdateMemberRole changes a member's role and returns the member. It
// returns EINVALID for an unknown role and ENOTFOUND if the team or the
// member does not exist.
func (db *DB) UpdateMemberRole(ctx context.Context, team, idOrEmail string, role chartctl.Role) (*chartctl.Member, error) {
	if !role.Valid() {
		return nil, invalidRole(role)
	}
	if !storable(team, idOrEmail) {
		return nil, db.memberNotFound(ctx, team, idOrEmail)
	}
	var m *chartctl.Member
	err := db.changing(ctx, func(q querier) error {
		var err error
		m, err = scanMember(q.QueryRow(ctx, `UPDATE members m SET role = $4 FROM teams t
			WHERE t.id = m.team_id AND m.id = (
				SELECT m.id FROM members m JOIN teams t ON t.id = m.team_id
				WHERE `+memberWhere+` ORDER BY m.id = $2 DESC LIMIT 1)
			RETURNING `+memberCols, team, idOrEmail, lowerEmail(idOrEmail), string(role)))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, db.memberNotFound(ctx, team, idOrEmail)
	}
	return m, db.wrap("update member role", err)
}

// RemoveMember removes a member from team. It returns ENOTFOUND if the team
// or the member does not exist.
func (db *DB) RemoveMember(ctx context.Context, team, idOrEmail string) error {
	if !storable(team, idOrEmail) {
		return db.memberNotFound(ctx, team, idOrEmail)
	}
	errGone := errors.New("no such member")
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM members WHERE id = (
			SELECT m.id FROM members m JOIN teams t ON t.id = m.team_id
			WHERE `+memberWhere+` ORDER BY m.id = $2 DESC LIMIT 1)`, team, idOrEmail, lowerEmail(idOrEmail))
		if err == nil && tag.RowsAffected() == 0 {
			return errGone
		}
		return err
	})
	if errors.Is(err, errGone) {
		return db.memberNotFound(ctx, team, idOrEmail)
	}
	return db.wrap("remove member", err)
}

// memberNotFound is the error of a member lookup that found nothing: the
// team's when the team does not exist, else the member's.
func (db *DB) memberNotFound(ctx context.Context, team, idOrEmail string) error {
	if _, err := teamID(ctx, db.pool, team); err != nil {
		return db.wrap("get team", err)
	}
	return chartctl.Errorf(chartctl.ENOTFOUND, "Member %q not found in team %q.", idOrEmail, team)
}

// teamID returns the ID of the team named name. It returns ENOTFOUND if
// none.
func teamID(ctx context.Context, q querier, name string) (string, error) {
	if !storable(name) {
		return "", teamNotFound(name)
	}
	var id string
	err := q.QueryRow(ctx, `SELECT id FROM teams WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", teamNotFound(name)
	}
	return id, err
}

func teamNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Team %q not found.", name)
}

func invalidRole(r chartctl.Role) error {
	return chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", r)
}
