package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// adminLock is the key of the transaction-level advisory lock taken by
// every change that can take away an enabled admin ("chartadm" in ASCII):
// two admins disabling each other at once, on any replicas, queue, so the
// second sees the first's change and the server always keeps one.
const adminLock int64 = 0x636861727461646d

// Users returns every user, by email.
func (db *DB) Users(ctx context.Context) ([]*chartctl.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+userCols+` FROM users ORDER BY email_key`)
	if err != nil {
		return nil, db.wrap("list users", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.User, error) { return scanUser(r) })
	return nilIfEmpty(out), db.wrap("list users", err)
}

// UpdateUser applies upd to the user with id. Disabling ends every
// credential of the user in the same transaction. It returns ENOTFOUND,
// and ECONFLICT when the change would leave no enabled admin.
func (db *DB) UpdateUser(ctx context.Context, id string, upd chartctl.UserUpdate) (*chartctl.User, error) {
	if !storable(id) || id == "" {
		return nil, userNotFound()
	}
	var out *chartctl.User
	err := db.mutate(ctx, "update user", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, adminLock); err != nil {
			return err
		}
		u, err := scanUser(tx.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		wasEnabledAdmin := u.Admin && !u.Disabled
		disabling := upd.Disabled != nil && *upd.Disabled && !u.Disabled
		if upd.Disabled != nil {
			u.Disabled = *upd.Disabled
		}
		if upd.Admin != nil {
			u.Admin = *upd.Admin
		}
		if upd.PasswordHash != nil {
			u.PasswordHash = *upd.PasswordHash
		}
		oldKey := lowerEmail(u.Email)
		if upd.Email != nil {
			if lowerEmail(*upd.Email) == "" || !storable(*upd.Email) {
				return chartctl.Invalid("email", "A valid email is required.")
			}
			u.Email = *upd.Email
		}
		if upd.Identity != nil {
			if err := checkIdentity(*upd.Identity); err != nil {
				return err
			}
			u.Identity = *upd.Identity
		}
		if upd.IDPGroups != nil {
			u.IDPGroups = *upd.IDPGroups
		}
		if wasEnabledAdmin && !(u.Admin && !u.Disabled) {
			if err := otherEnabledAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		prov, iss, sub := identityCols(u.Identity)
		_, err = tx.Exec(ctx, `UPDATE users SET disabled = $2, admin = $3, password_hash = $4, email = $5, email_key = $6,
			identity_provider = $7, identity_issuer = $8, identity_subject = $9, idp_groups = $10 WHERE id = $1`,
			id, u.Disabled, u.Admin, u.PasswordHash, text(u.Email), lowerEmail(u.Email), prov, iss, sub, groupCol(u.IDPGroups))
		switch {
		case isUnique(err, "users_identity_key"):
			return identityTaken(u.Identity)
		case isUnique(err, "users_email_key_key"):
			return chartctl.Errorf(chartctl.ECONFLICT, "A user with email %q already exists.", u.Email)
		case err != nil:
			return err
		}
		if newKey := lowerEmail(u.Email); newKey != oldKey {
			// The team memberships recorded for the old email follow the
			// user; where the new email is already a member of a team,
			// that membership stays.
			if _, err := tx.Exec(ctx, `DELETE FROM members m WHERE m.email_key = $1
				AND EXISTS (SELECT 1 FROM members n WHERE n.team_id = m.team_id AND n.email_key = $2)`, oldKey, newKey); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE members SET email = $2, email_key = $3 WHERE email_key = $1`, oldKey, text(u.Email), newKey); err != nil {
				return err
			}
		}
		if disabling {
			if err := endCredentials(ctx, tx, id, db.now()); err != nil {
				return err
			}
		}
		out = u
		return nil
	})
	if err != nil {
		return nil, err
	}
	db.credentialsChanged(ctx)
	return out, nil
}

// DeleteUser deletes the user with id, their memberships and every
// credential, in one transaction. Repositories and organizations they
// created stay. It returns ENOTFOUND, and ECONFLICT for the last enabled
// admin.
func (db *DB) DeleteUser(ctx context.Context, id string) error {
	if !storable(id) || id == "" {
		return userNotFound()
	}
	err := db.mutate(ctx, "delete user", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, adminLock); err != nil {
			return err
		}
		u, err := scanUser(tx.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		if u.Admin && !u.Disabled {
			if err := otherEnabledAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		if err := endCredentials(ctx, tx, id, db.now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM members WHERE email_key = $1`, lowerEmail(u.Email)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
		return err
	})
	if err == nil {
		db.credentialsChanged(ctx)
	}
	return err
}

// TouchUser records that the user was seen at t; a recorded time never
// moves back, and an unknown user is skipped.
func (db *DB) TouchUser(ctx context.Context, id string, t time.Time) error {
	if !storable(id) || id == "" {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE users SET last_seen_at = $2
		WHERE id = $1 AND (last_seen_at IS NULL OR last_seen_at < $2)`, id, t.UTC().Truncate(time.Microsecond))
	return db.wrap("touch user", err)
}

// otherEnabledAdmin returns ECONFLICT unless an enabled admin other than
// the user id exists.
func otherEnabledAdmin(ctx context.Context, tx pgx.Tx, id string) error {
	var found bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE admin AND NOT disabled AND id <> $1)`, id).Scan(&found); err != nil {
		return err
	}
	if !found {
		return chartctl.Errorf(chartctl.ECONFLICT, "This is the last enabled server admin; make another user an admin first.")
	}
	return nil
}

// endCredentials ends every credential of the user: deletes their API
// keys, dashboard sessions and authorization codes, and revokes their
// OAuth grants (so every token of them, and any issued for them later).
func endCredentials(ctx context.Context, tx pgx.Tx, userID string, now time.Time) error {
	for _, stmt := range []string{
		`DELETE FROM api_keys WHERE user_id = $1`,
		`DELETE FROM web_sessions WHERE user_id = $1`,
		`DELETE FROM oauth_codes WHERE user_id = $1`,
		`UPDATE oauth_tokens SET revoked = true WHERE user_id = $1 AND NOT revoked`,
	} {
		if _, err := tx.Exec(ctx, stmt, userID); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO oauth_grants (id, revoked, created_at)
		SELECT DISTINCT grant_id, true, $2::timestamptz FROM oauth_tokens WHERE user_id = $1
		ORDER BY grant_id
		ON CONFLICT (id) DO UPDATE SET revoked = true`, userID, now)
	return err
}
