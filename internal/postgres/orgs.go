package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateOrganization stores o, filling ID and CreatedAt when empty. It
// returns EINVALID for an invalid name and ECONFLICT if the name is taken.
func (db *DB) CreateOrganization(ctx context.Context, o *chartctl.Organization) error {
	if err := chartctl.ValidateName("name", o.Name); err != nil {
		return err
	}
	if err := db.fill(&o.ID, prefixOrg, &o.CreatedAt); err != nil {
		return err
	}
	err := db.tx(ctx, "create organization", func(tx pgx.Tx) error {
		// The name of an organization deleted within the name grace
		// period stays reserved; the row lock orders this against a
		// concurrent deletion of the same name.
		var deletedAt time.Time
		err := tx.QueryRow(ctx, `SELECT deleted_at FROM organization_tombstones WHERE name = $1 FOR UPDATE`, o.Name).Scan(&deletedAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case db.now().Before(deletedAt.Add(db.nameGrace)):
			return nameNotAvailable(o.Name)
		default:
			if _, err := tx.Exec(ctx, `DELETE FROM organization_tombstones WHERE name = $1`, o.Name); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO organizations (id, name, description, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5)`, o.ID, o.Name, text(o.Description), o.CreatedBy, o.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO usage (scope, name) VALUES ('organization', $1) ON CONFLICT DO NOTHING`, o.Name); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	})
	if isUnique(err, "organizations_pkey") {
		return nameNotAvailable(o.Name)
	}
	return db.wrap("create organization", err)
}

const orgCols = `id, name, description, created_by, created_at`

func scanOrg(row pgx.Row) (*chartctl.Organization, error) {
	var o chartctl.Organization
	if err := row.Scan(&o.ID, &o.Name, &o.Description, &o.CreatedBy, &o.CreatedAt); err != nil {
		return nil, err
	}
	o.CreatedAt = utc(o.CreatedAt)
	return &o, nil
}

// Organization returns the organization named name. It returns ENOTFOUND
// if none.
func (db *DB) Organization(ctx context.Context, name string) (*chartctl.Organization, error) {
	if !storable(name) {
		return nil, orgNotFound(name)
	}
	o, err := scanOrg(db.pool.QueryRow(ctx, `SELECT `+orgCols+` FROM organizations WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, orgNotFound(name)
	}
	return o, db.wrap("get organization", err)
}

// Organizations returns every organization, by name.
func (db *DB) Organizations(ctx context.Context) ([]*chartctl.Organization, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+orgCols+` FROM organizations ORDER BY name`)
	if err != nil {
		return nil, db.wrap("list organizations", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Organization, error) { return scanOrg(r) })
	return out, db.wrap("list organizations", err)
}

// OrgRoles returns the roles the user with this id and email holds, by
// organization name: the highest over the teams where email is a member
// (compared case-insensitively), and owner where the user created the
// organization. Either argument may be empty.
func (db *DB) OrgRoles(ctx context.Context, userID, email string) (map[string]chartctl.Role, error) {
	roles := map[string]chartctl.Role{}
	if !storable(userID) {
		userID = ""
	}
	if !storable(email) {
		email = ""
	}
	rows, err := db.pool.Query(ctx, `
		SELECT t.organization, m.role FROM members m JOIN teams t ON t.id = m.team_id
		WHERE m.email_key = $1 AND $1 <> ''
		UNION ALL
		SELECT name, 'owner' FROM organizations WHERE created_by = $2 AND $2 <> ''`, lowerEmail(email), userID)
	if err != nil {
		return nil, db.wrap("get organization roles", err)
	}
	var org, role string
	_, err = pgx.ForEachRow(rows, []any{&org, &role}, func() error {
		roles[org] = roles[org].Max(chartctl.Role(role))
		return nil
	})
	if err != nil {
		return nil, db.wrap("get organization roles", err)
	}
	return roles, nil
}

func orgNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", name)
}
