package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateUser stores u, filling ID and CreatedAt when empty. It returns
// EINVALID if the email is empty and ECONFLICT if it is taken (emails are
// compared case-insensitively) or the ID is.
func (db *DB) CreateUser(ctx context.Context, u *chartctl.User) error {
	email := lowerEmail(u.Email)
	if email == "" || !storable(email) {
		return chartctl.Invalid("email", "A valid email is required.")
	}
	if err := checkIdentity(u.Identity); err != nil {
		return err
	}
	if err := db.fill(&u.ID, prefixUser, &u.CreatedAt); err != nil {
		return err
	}
	prov, iss, sub := identityCols(u.Identity)
	err := db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO users (id, email, email_key, password_hash, admin, disabled, created_at, last_seen_at,
			identity_provider, identity_issuer, identity_subject, idp_groups)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, u.ID, text(u.Email), email, u.PasswordHash, u.Admin, u.Disabled, u.CreatedAt, u.LastSeenAt,
			prov, iss, sub, groupCol(u.IDPGroups))
		return err
	})
	switch {
	case isUnique(err, "users_identity_key"):
		return identityTaken(u.Identity)
	case isUnique(err, "users_email_key_key"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A user with email %q already exists.", u.Email)
	case isUnique(err, "users_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A user with ID %q already exists.", u.ID)
	}
	return db.wrap("create user", err)
}

const userCols = `id, email, password_hash, admin, disabled, created_at, last_seen_at, identity_provider, identity_issuer, identity_subject, idp_groups`

// groupCol is a list of IdP groups as stored: text without NUL, never
// NULL.
func groupCol(groups []string) []string {
	if groups == nil {
		return []string{}
	}
	return texts(groups)
}

// groupsOf reads a stored list of IdP groups: nil when empty, as bolt
// answers.
func groupsOf(groups []string) []string {
	if len(groups) == 0 {
		return nil
	}
	return groups
}

func scanUser(row pgx.Row) (*chartctl.User, error) {
	var u chartctl.User
	err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Admin, &u.Disabled, &u.CreatedAt, &u.LastSeenAt,
		&u.Identity.Provider, &u.Identity.Issuer, &u.Identity.Subject, &u.IDPGroups)
	u.IDPGroups = groupsOf(u.IDPGroups)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, userNotFound()
	} else if err != nil {
		return nil, err
	}
	u.CreatedAt, u.LastSeenAt = utc(u.CreatedAt), utcPtr(u.LastSeenAt)
	return &u, nil
}

// User returns the user with id. It returns ENOTFOUND if none.
func (db *DB) User(ctx context.Context, id string) (*chartctl.User, error) {
	if !storable(id) {
		return nil, userNotFound()
	}
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
	return u, db.wrap("get user", err)
}

// UserByEmail returns the user with email, compared case-insensitively. It
// returns ENOTFOUND if none.
func (db *DB) UserByEmail(ctx context.Context, email string) (*chartctl.User, error) {
	if !storable(email) {
		return nil, userNotFound()
	}
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE email_key = $1`, lowerEmail(email)))
	return u, db.wrap("get user by email", err)
}

// UserByIdentity returns the user bound to the identity provider's
// account id. It returns ENOTFOUND if none.
func (db *DB) UserByIdentity(ctx context.Context, id chartctl.Identity) (*chartctl.User, error) {
	if id.Local() || checkIdentity(id) != nil {
		return nil, userNotFound()
	}
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users
		WHERE identity_provider = $1 AND identity_issuer = $2 AND identity_subject = $3`, id.Provider, id.Issuer, id.Subject))
	return u, db.wrap("get user by identity", err)
}

// checkIdentity refuses an identity PostgreSQL text cannot hold, or a
// bound one without a subject.
func checkIdentity(id chartctl.Identity) error {
	if id.Local() {
		return nil
	}
	if id.Subject == "" || !storable(id.Provider) || !storable(id.Issuer) || !storable(id.Subject) {
		return chartctl.Invalid("identity", "An identity needs a provider and a subject without NUL characters.")
	}
	return nil
}

// identityCols are the identity columns of id: empty for a local account.
func identityCols(id chartctl.Identity) (provider, issuer, subject string) {
	if id.Local() {
		return "", "", ""
	}
	return id.Provider, id.Issuer, id.Subject
}

func identityTaken(id chartctl.Identity) error {
	return chartctl.Errorf(chartctl.ECONFLICT, "Another user is already bound to this %s account.", id.Provider)
}

// UserCount returns the number of users.
func (db *DB) UserCount(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, db.wrap("count users", err)
}

func userNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "User not found.") }

// CreateAPIKey stores k, filling ID and CreatedAt when empty. It returns
// EINVALID if the hash is empty, ENOTFOUND if the user does not exist and
// ECONFLICT if a key with the same hash (or ID) exists.
func (db *DB) CreateAPIKey(ctx context.Context, k *chartctl.APIKey) error {
	if len(k.Hash) == 0 {
		return chartctl.Invalid("hash", "An API key hash is required.")
	}
	if err := db.fill(&k.ID, prefixAPIKey, &k.CreatedAt); err != nil {
		return err
	}
	if !storable(k.UserID) {
		return userNotFound()
	}
	err := db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO api_keys (id, user_id, name, scopes, hash, created_at, last_used_at, expires_at, repositories)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			k.ID, k.UserID, text(k.Name), nonNil(k.Scopes.Strings()), k.Hash, k.CreatedAt, k.LastUsedAt, k.ExpiresAt,
			nilIfEmpty(texts(k.Repositories)))
		return err
	})
	switch {
	case isForeignKey(err, "api_keys_user_id_fkey"):
		return userNotFound()
	case isUnique(err, "api_keys_hash_key"):
		return chartctl.Errorf(chartctl.ECONFLICT, "An API key with this value already exists.")
	case isUnique(err, "api_keys_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "An API key with ID %q already exists.", k.ID)
	}
	return db.wrap("create api key", err)
}

const apiKeyCols = `id, user_id, name, scopes, hash, created_at, last_used_at, expires_at, repositories`

func scanAPIKey(row pgx.Row) (*chartctl.APIKey, error) {
	var (
		k      chartctl.APIKey
		scopes []string
	)
	err := row.Scan(&k.ID, &k.UserID, &k.Name, &scopes, &k.Hash, &k.CreatedAt, &k.LastUsedAt, &k.ExpiresAt, &k.Repositories)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apiKeyNotFound()
	} else if err != nil {
		return nil, err
	}
	k.Scopes = scopesOf(scopes)
	k.Repositories = nilIfEmpty(k.Repositories)
	k.CreatedAt, k.LastUsedAt, k.ExpiresAt = utc(k.CreatedAt), utcPtr(k.LastUsedAt), utcPtr(k.ExpiresAt)
	return &k, nil
}

// APIKeyByHash returns the key whose hash is h. It returns ENOTFOUND if
// none.
func (db *DB) APIKeyByHash(ctx context.Context, h []byte) (*chartctl.APIKey, error) {
	if len(h) == 0 {
		return nil, apiKeyNotFound()
	}
	k, err := scanAPIKey(db.pool.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE hash = $1`, h))
	return k, db.wrap("get api key", err)
}

// APIKeys returns the user's keys, oldest first (an unknown user has none).
func (db *DB) APIKeys(ctx context.Context, userID string) ([]*chartctl.APIKey, error) {
	if !storable(userID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE user_id = $1 ORDER BY created_at, id COLLATE "C"`, userID)
	if err != nil {
		return nil, db.wrap("list api keys", err)
	}
	var out []*chartctl.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			rows.Close()
			return nil, db.wrap("list api keys", err)
		}
		out = append(out, k)
	}
	return out, db.wrap("list api keys", rows.Err())
}

// DeleteAPIKey revokes the user's key id. It returns ENOTFOUND if the user
// has no such key.
func (db *DB) DeleteAPIKey(ctx context.Context, userID, id string) error {
	if !storable(userID, id) {
		return apiKeyNotFound()
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM api_keys WHERE id = $1 AND user_id = $2`, id, userID)
		if err == nil && tag.RowsAffected() == 0 {
			return apiKeyNotFound()
		}
		return err
	})
	if err != nil {
		return db.wrap("delete api key", err)
	}
	db.credentialsChanged(ctx)
	return nil
}

// TouchAPIKeys records last-used times for many keys in one statement.
// Keys that no longer exist are skipped, and a recorded time never moves
// back.
func (db *DB) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	times := make([]time.Time, 0, len(used))
	for id, t := range used {
		if !storable(id) {
			continue // no key has such an ID
		}
		ids = append(ids, id)
		times = append(times, t.UTC())
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE api_keys AS k SET last_used_at = u.t
		FROM unnest($1::text[], $2::timestamptz[]) AS u(id, t)
		WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.t)`, ids, times)
	return db.wrap("touch api keys", err)
}

func apiKeyNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "API key not found.") }
