package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ID prefixes of the access records (issue #29), as bolt uses.
const (
	prefixGrant     = "grant_"
	prefixRobot     = "robot_"
	prefixPublisher = "pub_"
	prefixExchanged = "exc_"
)

// grantCols reads a grant with the names of its repository and subject.
const grantCols = `g.id, g.repository_id, r.name, g.kind, g.subject_id,
	COALESCE(t.name, u.email, ''), g.role, g.created_by, g.created_at`

const grantFrom = `repository_grants g JOIN repositories r ON r.id = g.repository_id
	LEFT JOIN teams t ON t.id = g.team_id LEFT JOIN users u ON u.id = g.user_id`

func scanGrant(row pgx.Row) (*chartctl.Grant, error) {
	var (
		g          chartctl.Grant
		kind, role string
	)
	if err := row.Scan(&g.ID, &g.RepositoryID, &g.Repository, &kind, &g.SubjectID, &g.Subject, &role,
		&g.CreatedBy, &g.CreatedAt); err != nil {
		return nil, err
	}
	g.Kind, g.Role, g.CreatedAt = chartctl.GrantKind(kind), chartctl.RepoRole(role), utc(g.CreatedAt)
	return &g, nil
}

// PutGrant implements chartctl.AccessStore. One statement inserts or
// replaces the role, so concurrent grants to the same subject on any
// replicas leave one grant.
func (db *DB) PutGrant(ctx context.Context, g *chartctl.Grant) (*chartctl.Grant, error) {
	if !g.Kind.Valid() {
		return nil, chartctl.Invalid("kind", "Invalid grant kind %q: use team or user.", g.Kind)
	}
	if !g.Role.Valid() {
		return nil, chartctl.Invalid("role", "Invalid role %q: use read, write, maintain or admin.", g.Role)
	}
	if err := db.fill(&g.ID, prefixGrant, &g.CreatedAt); err != nil {
		return nil, err
	}
	if !storable(g.RepositoryID) {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", g.RepositoryID)
	}
	if !storable(g.SubjectID) {
		return nil, subjectNotFound(g.Kind, g.SubjectID)
	}
	var teamID, userID *string
	if g.Kind == chartctl.GrantTeam {
		teamID = &g.SubjectID
	} else {
		userID = &g.SubjectID
	}
	var out *chartctl.Grant
	err := db.mutate(ctx, "put grant", func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `INSERT INTO repository_grants
			(id, repository_id, kind, subject_id, team_id, user_id, role, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (repository_id, kind, subject_id) DO UPDATE SET role = EXCLUDED.role
			RETURNING id`,
			g.ID, g.RepositoryID, string(g.Kind), g.SubjectID, teamID, userID, string(g.Role), g.CreatedBy, g.CreatedAt).Scan(&id)
		switch {
		case isForeignKey(err, "repository_grants_repository_id_fkey"):
			return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", g.RepositoryID)
		case isForeignKey(err, "repository_grants_team_id_fkey"), isForeignKey(err, "repository_grants_user_id_fkey"):
			return subjectNotFound(g.Kind, g.SubjectID)
		case err != nil:
			return err
		}
		out, err = scanGrant(tx.QueryRow(ctx, `SELECT `+grantCols+` FROM `+grantFrom+` WHERE g.id = $1`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	// A role may have been lowered: replicas drop the principals they
	// cached with the old one.
	db.credentialsChanged(ctx)
	return out, nil
}

func subjectNotFound(kind chartctl.GrantKind, id string) error {
	if kind == chartctl.GrantTeam {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Team %q not found.", id)
	}
	return userNotFound()
}

// Grants implements chartctl.AccessStore.
func (db *DB) Grants(ctx context.Context, repositoryID string) ([]*chartctl.Grant, error) {
	if !storable(repositoryID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+grantCols+` FROM `+grantFrom+`
		WHERE g.repository_id = $1
		ORDER BY g.kind = 'team' DESC, COALESCE(t.name, u.email, '') COLLATE "C"`, repositoryID)
	if err != nil {
		return nil, db.wrap("list grants", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Grant, error) { return scanGrant(r) })
	return out, db.wrap("list grants", err)
}

// DeleteGrant implements chartctl.AccessStore.
func (db *DB) DeleteGrant(ctx context.Context, repositoryID string, kind chartctl.GrantKind, subjectID string) error {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "The repository has no grant to that %s.", kind)
	if !storable(repositoryID, subjectID) {
		return notFound
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM repository_grants WHERE repository_id = $1 AND kind = $2 AND subject_id = $3`,
			repositoryID, string(kind), subjectID)
		if err == nil && tag.RowsAffected() == 0 {
			return notFound
		}
		return err
	})
	if err != nil {
		return db.wrap("delete grant", err)
	}
	db.credentialsChanged(ctx)
	return nil
}

// GrantsFor implements chartctl.AccessStore.
func (db *DB) GrantsFor(ctx context.Context, userID, email string) (map[string]chartctl.RepoRole, error) {
	roles := map[string]chartctl.RepoRole{}
	if !storable(userID) {
		userID = ""
	}
	if !storable(email) {
		email = ""
	}
	rows, err := db.pool.Query(ctx, `
		SELECT repository_id, role FROM repository_grants WHERE user_id = $1 AND $1 <> ''
		UNION ALL
		SELECT g.repository_id, g.role FROM repository_grants g JOIN members m ON m.team_id = g.team_id
		WHERE m.email_key = $2 AND $2 <> ''`, userID, lowerEmail(email))
	if err != nil {
		return nil, db.wrap("get grants", err)
	}
	var repo, role string
	_, err = pgx.ForEachRow(rows, []any{&repo, &role}, func() error {
		roles[repo] = roles[repo].Max(chartctl.RepoRole(role))
		return nil
	})
	if err != nil {
		return nil, db.wrap("get grants", err)
	}
	return roles, nil
}

const robotCols = `b.id, b.organization_id, o.name, b.name, b.description, b.repositories, b.permissions,
	b.secret_hash, b.previous_secret_hash, b.previous_secret_expires_at, b.disabled, b.expires_at,
	b.last_used_at, b.created_by, b.created_at`

const robotFrom = `robots b JOIN organizations o ON o.id = b.organization_id`

func scanRobot(row pgx.Row) (*chartctl.Robot, error) {
	var (
		r     chartctl.Robot
		perms []string
	)
	err := row.Scan(&r.ID, &r.OrganizationID, &r.Organization, &r.Name, &r.Description, &r.Repositories, &perms,
		&r.SecretHash, &r.PreviousSecretHash, &r.PreviousSecretExpiresAt, &r.Disabled, &r.ExpiresAt,
		&r.LastUsedAt, &r.CreatedBy, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, robotNotFound()
	} else if err != nil {
		return nil, err
	}
	for _, p := range perms {
		r.Permissions = append(r.Permissions, chartctl.RobotPermission(p))
	}
	if len(r.Repositories) == 0 {
		r.Repositories = nil
	}
	if len(r.PreviousSecretHash) == 0 {
		r.PreviousSecretHash = nil
	}
	r.CreatedAt = utc(r.CreatedAt)
	r.PreviousSecretExpiresAt, r.ExpiresAt, r.LastUsedAt = utcPtr(r.PreviousSecretExpiresAt), utcPtr(r.ExpiresAt), utcPtr(r.LastUsedAt)
	return &r, nil
}

func robotNotFound() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Robot account not found.")
}

// CreateRobot implements chartctl.AccessStore.
func (db *DB) CreateRobot(ctx context.Context, r *chartctl.Robot) error {
	if err := chartctl.ValidateName("name", r.Name); err != nil {
		return err
	}
	if len(r.SecretHash) == 0 {
		return chartctl.Invalid("secret", "A robot account needs a secret hash.")
	}
	if err := db.fill(&r.ID, prefixRobot, &r.CreatedAt); err != nil {
		return err
	}
	if !storable(r.OrganizationID) {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", r.OrganizationID)
	}
	err := db.mutate(ctx, "create robot", func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO robots (id, organization_id, name, description, repositories, permissions,
			secret_hash, previous_secret_hash, previous_secret_expires_at, disabled, expires_at, last_used_at, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			RETURNING (SELECT name FROM organizations WHERE id = $2)`,
			r.ID, r.OrganizationID, r.Name, text(r.Description), nonNil(texts(r.Repositories)), nonNil(r.Permissions.Strings()),
			r.SecretHash, nilIfEmpty(r.PreviousSecretHash), r.PreviousSecretExpiresAt, r.Disabled, r.ExpiresAt, r.LastUsedAt,
			r.CreatedBy, r.CreatedAt).Scan(&r.Organization)
		switch {
		case isUnique(err, "robots_org_name"):
			return chartctl.Errorf(chartctl.ECONFLICT, "The organization already has a robot account named %q; choose another name.", r.Name)
		case isUnique(err, "robots_pkey"):
			return chartctl.Errorf(chartctl.ECONFLICT, "A robot account with ID %q already exists.", r.ID)
		case isUnique(err, "robots_secret_hash_key"):
			return chartctl.Errorf(chartctl.ECONFLICT, "A robot account with this secret already exists.")
		case isForeignKey(err, "robots_organization_id_fkey"):
			return chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", r.OrganizationID)
		}
		return err
	})
	return err
}

// Robot implements chartctl.AccessStore.
func (db *DB) Robot(ctx context.Context, org, name string) (*chartctl.Robot, error) {
	if !storable(org, name) {
		return nil, robotNotFound()
	}
	r, err := scanRobot(db.pool.QueryRow(ctx, `SELECT `+robotCols+` FROM `+robotFrom+` WHERE o.name = $1 AND b.name = $2`, org, name))
	return r, db.wrap("get robot", err)
}

// RobotByID implements chartctl.AccessStore.
func (db *DB) RobotByID(ctx context.Context, id string) (*chartctl.Robot, error) {
	if !storable(id) {
		return nil, robotNotFound()
	}
	r, err := scanRobot(db.pool.QueryRow(ctx, `SELECT `+robotCols+` FROM `+robotFrom+` WHERE b.id = $1`, id))
	return r, db.wrap("get robot", err)
}

// RobotBySecretHash implements chartctl.AccessStore.
func (db *DB) RobotBySecretHash(ctx context.Context, h []byte) (*chartctl.Robot, error) {
	if len(h) == 0 {
		return nil, robotNotFound()
	}
	r, err := scanRobot(db.pool.QueryRow(ctx, `SELECT `+robotCols+` FROM `+robotFrom+`
		WHERE b.secret_hash = $1 OR b.previous_secret_hash = $1 LIMIT 1`, h))
	return r, db.wrap("get robot", err)
}

// Robots implements chartctl.AccessStore.
func (db *DB) Robots(ctx context.Context, org string) ([]*chartctl.Robot, error) {
	if !storable(org) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+robotCols+` FROM `+robotFrom+` WHERE o.name = $1 ORDER BY b.name`, org)
	if err != nil {
		return nil, db.wrap("list robots", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Robot, error) { return scanRobot(r) })
	return out, db.wrap("list robots", err)
}

// UpdateRobot implements chartctl.AccessStore.
func (db *DB) UpdateRobot(ctx context.Context, id string, upd chartctl.RobotUpdate) (*chartctl.Robot, error) {
	if !storable(id) {
		return nil, robotNotFound()
	}
	var desc *string
	if upd.Description != nil {
		d := text(*upd.Description)
		desc = &d
	}
	var repos, perms []string
	if upd.Repositories != nil {
		repos = nonNil(texts(upd.Repositories))
	}
	if upd.Permissions != nil {
		perms = nonNil(upd.Permissions.Strings())
	}
	var out *chartctl.Robot
	err := db.mutate(ctx, "update robot", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE robots SET
			description = COALESCE($2, description),
			repositories = COALESCE($3, repositories),
			permissions = COALESCE($4, permissions),
			disabled = COALESCE($5, disabled),
			expires_at = CASE WHEN $6 THEN NULL ELSE COALESCE($7, expires_at) END
			WHERE id = $1`, id, desc, repos, perms, upd.Disabled, upd.ClearExpiry, upd.ExpiresAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return robotNotFound()
		}
		// A disabled robot's exchanged credentials end at once.
		if _, err := tx.Exec(ctx, `DELETE FROM exchanged_credentials c USING robots b
			WHERE c.robot_id = b.id AND b.id = $1 AND b.disabled`, id); err != nil {
			return err
		}
		out, err = scanRobot(tx.QueryRow(ctx, `SELECT `+robotCols+` FROM `+robotFrom+` WHERE b.id = $1`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	db.credentialsChanged(ctx)
	return out, nil
}

// RotateRobot implements chartctl.AccessStore.
func (db *DB) RotateRobot(ctx context.Context, id string, secretHash []byte, previousUntil *time.Time) (*chartctl.Robot, error) {
	if len(secretHash) == 0 {
		return nil, chartctl.Invalid("secret", "A robot account needs a secret hash.")
	}
	if !storable(id) {
		return nil, robotNotFound()
	}
	var out *chartctl.Robot
	err := db.mutate(ctx, "rotate robot", func(tx pgx.Tx) error {
		// The right-hand sides see the row before the update, so the
		// replaced secret becomes the previous one.
		tag, err := tx.Exec(ctx, `UPDATE robots SET
			previous_secret_hash = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE secret_hash END,
			previous_secret_expires_at = $3,
			secret_hash = $2
			WHERE id = $1`, id, secretHash, previousUntil)
		if isUnique(err, "robots_secret_hash_key") {
			return chartctl.Errorf(chartctl.ECONFLICT, "A robot account with this secret already exists.")
		}
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return robotNotFound()
		}
		out, err = scanRobot(tx.QueryRow(ctx, `SELECT `+robotCols+` FROM `+robotFrom+` WHERE b.id = $1`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	db.credentialsChanged(ctx)
	return out, nil
}

// DeleteRobot implements chartctl.AccessStore; its publishers and
// exchanged credentials go through their foreign keys.
func (db *DB) DeleteRobot(ctx context.Context, id string) error {
	if !storable(id) {
		return robotNotFound()
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM robots WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			return robotNotFound()
		}
		return err
	})
	if err != nil {
		return db.wrap("delete robot", err)
	}
	db.credentialsChanged(ctx)
	return nil
}

// TouchRobots implements chartctl.AccessStore in one statement; a
// recorded time never moves back.
func (db *DB) TouchRobots(ctx context.Context, used map[string]time.Time) error {
	ids := make([]string, 0, len(used))
	times := make([]time.Time, 0, len(used))
	for id, t := range used {
		if !storable(id) {
			continue // no robot has such an ID
		}
		ids = append(ids, id)
		times = append(times, t.UTC())
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE robots AS b SET last_used_at = u.t
		FROM unnest($1::text[], $2::timestamptz[]) AS u(id, t)
		WHERE b.id = u.id AND (b.last_used_at IS NULL OR b.last_used_at < u.t)`, ids, times)
	return db.wrap("touch robots", err)
}

const publisherCols = `id, robot_id, issuer, audience, claims, created_by, created_at`

func scanPublisher(row pgx.Row) (*chartctl.TrustedPublisher, error) {
	var (
		p      chartctl.TrustedPublisher
		claims []byte
	)
	if err := row.Scan(&p.ID, &p.RobotID, &p.Issuer, &p.Audience, &claims, &p.CreatedBy, &p.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(claims, &p.Claims); err != nil {
		return nil, err
	}
	if len(p.Claims) == 0 {
		p.Claims = nil
	}
	p.CreatedAt = utc(p.CreatedAt)
	return &p, nil
}

// AddPublisher implements chartctl.AccessStore.
func (db *DB) AddPublisher(ctx context.Context, p *chartctl.TrustedPublisher) error {
	if err := db.fill(&p.ID, prefixPublisher, &p.CreatedAt); err != nil {
		return err
	}
	if !storable(p.RobotID) {
		return robotNotFound()
	}
	claims, err := json.Marshal(p.Claims)
	if err != nil {
		return err
	}
	if p.Claims == nil {
		claims = []byte("{}")
	}
	err = db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO trusted_publishers (id, robot_id, issuer, audience, claims, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, p.ID, p.RobotID, text(p.Issuer), text(p.Audience), claims, p.CreatedBy, p.CreatedAt)
		return err
	})
	switch {
	case isForeignKey(err, "trusted_publishers_robot_id_fkey"):
		return robotNotFound()
	case isUnique(err, "trusted_publishers_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A trusted publisher with ID %q already exists.", p.ID)
	}
	return db.wrap("add publisher", err)
}

// Publishers implements chartctl.AccessStore.
func (db *DB) Publishers(ctx context.Context, robotID string) ([]*chartctl.TrustedPublisher, error) {
	if !storable(robotID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+publisherCols+` FROM trusted_publishers WHERE robot_id = $1 ORDER BY created_at, id`, robotID)
	if err != nil {
		return nil, db.wrap("list publishers", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.TrustedPublisher, error) { return scanPublisher(r) })
	return out, db.wrap("list publishers", err)
}

// PublishersByIssuer implements chartctl.AccessStore.
func (db *DB) PublishersByIssuer(ctx context.Context, issuer string) ([]*chartctl.TrustedPublisher, error) {
	if !storable(issuer) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+publisherCols+` FROM trusted_publishers WHERE issuer = $1 ORDER BY created_at, id`, issuer)
	if err != nil {
		return nil, db.wrap("list publishers", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.TrustedPublisher, error) { return scanPublisher(r) })
	return out, db.wrap("list publishers", err)
}

// DeletePublisher implements chartctl.AccessStore.
func (db *DB) DeletePublisher(ctx context.Context, robotID, id string) error {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "Trusted publisher %q not found.", id)
	if !storable(robotID, id) {
		return notFound
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM trusted_publishers WHERE id = $1 AND robot_id = $2`, id, robotID)
		if err == nil && tag.RowsAffected() == 0 {
			return notFound
		}
		return err
	})
	return db.wrap("delete publisher", err)
}

// CreateExchangedCredential implements chartctl.AccessStore.
func (db *DB) CreateExchangedCredential(ctx context.Context, c *chartctl.ExchangedCredential) error {
	if len(c.Hash) == 0 {
		return chartctl.Invalid("hash", "An exchanged credential needs a hash.")
	}
	if err := db.fill(&c.ID, prefixExchanged, &c.CreatedAt); err != nil {
		return err
	}
	if !storable(c.RobotID) {
		return robotNotFound()
	}
	err := db.mutate(ctx, "create exchanged credential", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM exchanged_credentials WHERE expires_at <= $1`, db.now()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO exchanged_credentials (hash, id, robot_id, publisher_id, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, c.Hash, c.ID, c.RobotID, c.PublisherID, c.ExpiresAt, c.CreatedAt)
		switch {
		case isForeignKey(err, "exchanged_credentials_robot_id_fkey"):
			return robotNotFound()
		case isUnique(err, "exchanged_credentials_pkey"), isUnique(err, "exchanged_credentials_id_key"):
			return chartctl.Errorf(chartctl.ECONFLICT, "An exchanged credential with that hash or ID already exists.")
		}
		return err
	})
	return err
}

// ExchangedCredentialByHash implements chartctl.AccessStore. An expired
// credential not pruned yet is not found either.
func (db *DB) ExchangedCredentialByHash(ctx context.Context, h []byte) (*chartctl.ExchangedCredential, error) {
	if len(h) == 0 {
		return nil, exchangedNotFound()
	}
	var c chartctl.ExchangedCredential
	err := db.pool.QueryRow(ctx, `SELECT id, robot_id, publisher_id, hash, expires_at, created_at
		FROM exchanged_credentials WHERE hash = $1 AND expires_at > $2`, h, db.now()).
		Scan(&c.ID, &c.RobotID, &c.PublisherID, &c.Hash, &c.ExpiresAt, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, exchangedNotFound()
	}
	if err != nil {
		return nil, db.wrap("get exchanged credential", err)
	}
	c.ExpiresAt, c.CreatedAt = utc(c.ExpiresAt), utc(c.CreatedAt)
	return &c, nil
}

func exchangedNotFound() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Credential not found or expired; exchange a new OIDC token at /v1/oidc/token.")
}

// RememberTokenID implements chartctl.AccessStore. The insert decides
// atomically on any number of replicas: of two concurrent exchanges of
// one token, the second waits for the first's row and finds it unexpired.
func (db *DB) RememberTokenID(ctx context.Context, issuer, jti string, until time.Time) (bool, error) {
	if !storable(issuer, jti) {
		return false, chartctl.Invalid("jti", "The token's issuer and jti must be valid text.")
	}
	fresh := false
	now := db.now()
	err := db.mutate(ctx, "remember token id", func(tx pgx.Tx) error {
		fresh = false
		if _, err := tx.Exec(ctx, `DELETE FROM oidc_token_ids WHERE expires_at <= $1 AND NOT (issuer = $2 AND jti = $3)`,
			now, issuer, jti); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `INSERT INTO oidc_token_ids (issuer, jti, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT (issuer, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at
			WHERE oidc_token_ids.expires_at <= $4
			RETURNING 1`, issuer, jti, until, now)
		if err != nil {
			return err
		}
		n := 0
		_, err = pgx.ForEachRow(rows, []any{new(int)}, func() error { n++; return nil })
		fresh = n > 0
		return err
	})
	return fresh, err
}

// DeleteOrganization implements chartctl.AccessStore. The organization's
// row lock orders it against repositories and teams being created in it
// (their foreign keys lock the row too).
func (db *DB) DeleteOrganization(ctx context.Context, name string) error {
	if !storable(name) {
		return orgNotFound(name)
	}
	err := db.mutate(ctx, "delete organization", func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `SELECT id FROM organizations WHERE name = $1 FOR UPDATE`, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return orgNotFound(name)
		} else if err != nil {
			return err
		}
		var owned int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM repositories WHERE organization = $1`, name).Scan(&owned); err != nil {
			return err
		}
		if owned > 0 {
			return chartctl.Errorf(chartctl.ECONFLICT,
				"Organization %q still owns %d repositories; delete them or move them to another owner first.", name, owned)
		}
		// Members and grants go with their teams, robots with the
		// organization's ID (and publishers and exchanged credentials
		// with them), deliveries with their webhooks.
		for _, q := range []string{
			`DELETE FROM teams WHERE organization = $1`,
			`DELETE FROM webhooks WHERE repository = '' AND organization = $1`,
			`DELETE FROM quotas WHERE scope = 'organization' AND name = $1`,
			`DELETE FROM usage WHERE scope = 'organization' AND name = $1`,
			`DELETE FROM organizations WHERE name = $1`,
		} {
			if _, err := tx.Exec(ctx, q, name); err != nil {
				return err
			}
		}
		now := db.now()
		if _, err := tx.Exec(ctx, `DELETE FROM organization_tombstones WHERE deleted_at <= $1`, now.Add(-db.nameGrace)); err != nil {
			return err
		}
		if db.nameGrace <= 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO organization_tombstones (name, deleted_at) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET deleted_at = EXCLUDED.deleted_at`, name, now)
		return err
	})
	if err != nil {
		return err
	}
	db.credentialsChanged(ctx)
	return nil
}
