package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateOAuthClient stores c, filling CreatedAt when zero. It returns
// EINVALID if the ID is empty and ECONFLICT if it is taken.
func (db *DB) CreateOAuthClient(ctx context.Context, c *chartctl.OAuthClient) error {
	if c.ID == "" {
		return chartctl.Invalid("client_id", "A client ID is required.")
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = db.now()
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, public, secret_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, c.ID, text(c.Name), nonNil(c.RedirectURIs), c.Public, c.SecretHash, c.CreatedAt)
	if isUnique(err, "oauth_clients_pkey") {
		return chartctl.Errorf(chartctl.ECONFLICT, "An OAuth client with ID %q already exists.", c.ID)
	}
	return db.wrap("create oauth client", err)
}

// OAuthClient returns the client with id. It returns ENOTFOUND if none.
func (db *DB) OAuthClient(ctx context.Context, id string) (*chartctl.OAuthClient, error) {
	if !storable(id) {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "OAuth client not found.")
	}
	var c chartctl.OAuthClient
	err := db.pool.QueryRow(ctx, `SELECT id, name, redirect_uris, public, secret_hash, created_at
		FROM oauth_clients WHERE id = $1`, id).Scan(&c.ID, &c.Name, &c.RedirectURIs, &c.Public, &c.SecretHash, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "OAuth client not found.")
	} else if err != nil {
		return nil, db.wrap("get oauth client", err)
	}
	c.RedirectURIs, c.SecretHash = nilIfEmpty(c.RedirectURIs), nilIfEmpty(c.SecretHash)
	c.CreatedAt = utc(c.CreatedAt)
	return &c, nil
}

// CreateAuthorizationCode stores c. It returns EINVALID if the hash or the
// grant ID is empty and ECONFLICT if the hash exists.
func (db *DB) CreateAuthorizationCode(ctx context.Context, c *chartctl.AuthorizationCode) error {
	if len(c.Hash) == 0 || c.GrantID == "" {
		return chartctl.Invalid("code", "An authorization code needs a hash and a grant ID.")
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = db.now()
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO oauth_codes
		(hash, client_id, user_id, redirect_uri, scopes, code_challenge, grant_id, created_at, expires_at, redeemed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.Hash, c.ClientID, c.UserID, c.RedirectURI, nonNil(c.Scopes.Strings()), c.CodeChallenge, c.GrantID,
		c.CreatedAt, c.ExpiresAt, c.RedeemedAt)
	if isUnique(err, "oauth_codes_pkey") {
		return chartctl.Errorf(chartctl.ECONFLICT, "This authorization code already exists.")
	}
	return db.wrap("create authorization code", err)
}

func invalidCode() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "The authorization code is invalid or expired.")
}

// RedeemAuthorizationCode exchanges a code for the tokens check returns, in
// one transaction holding the code's row lock, so of many concurrent
// redemptions on any replicas exactly one succeeds. A code check refuses
// is consumed all the same. A reused code revokes its grant: that
// revocation commits, and the call then returns ECONFLICT.
func (db *DB) RedeemAuthorizationCode(ctx context.Context, h []byte, now time.Time, check func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error)) error {
	if len(h) == 0 {
		return invalidCode()
	}
	reused := false
	var refused error
	err := db.tx(ctx, "redeem authorization code", func(tx pgx.Tx) error {
		reused, refused = false, nil
		var (
			c      chartctl.AuthorizationCode
			scopes []string
		)
		err := tx.QueryRow(ctx, `SELECT hash, client_id, user_id, redirect_uri, scopes, code_challenge, grant_id,
			created_at, expires_at, redeemed_at FROM oauth_codes WHERE hash = $1 FOR UPDATE`, h).Scan(
			&c.Hash, &c.ClientID, &c.UserID, &c.RedirectURI, &scopes, &c.CodeChallenge, &c.GrantID,
			&c.CreatedAt, &c.ExpiresAt, &c.RedeemedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return invalidCode()
		} else if err != nil {
			return err
		}
		c.Scopes, c.CreatedAt, c.ExpiresAt, c.RedeemedAt = scopesOf(scopes), utc(c.CreatedAt), utc(c.ExpiresAt), utcPtr(c.RedeemedAt)
		if c.RedeemedAt != nil {
			reused = true
			return revokeGrant(ctx, tx, c.GrantID, db.now())
		}
		if c.Expired(now) {
			return invalidCode()
		}
		tokens, checkErr := check(&c)
		at := now.UTC()
		if _, err := tx.Exec(ctx, `UPDATE oauth_codes SET redeemed_at = $2 WHERE hash = $1`, h, at); err != nil {
			return err
		}
		if checkErr != nil {
			// A refused attempt consumes the code too (RFC 6749 §4.1.2: a
			// code is single-use): the transaction commits the
			// redemption, and the check's error is returned after it.
			refused = checkErr
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO oauth_grants (id, revoked, created_at) VALUES ($1, false, $2)
			ON CONFLICT (id) DO NOTHING`, c.GrantID, at); err != nil {
			return err
		}
		if err := db.putTokens(ctx, tx, tokens); err != nil {
			return err
		}
		return revokeExcessGrants(ctx, tx, c.UserID, c.ClientID, c.GrantID, now)
	})
	if err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	if reused {
		return chartctl.Errorf(chartctl.ECONFLICT, "The authorization code was already used; the tokens issued for it are revoked.")
	}
	return nil
}

func invalidRefresh() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "The refresh token is invalid, expired or revoked.")
}

// tokenCols reads a token with Revoked set when it or its grant was
// revoked.
const tokenCols = `t.id, t.hash, t.kind, t.grant_id, t.parent_id, t.client_id, t.user_id, t.scopes,
	t.created_at, t.expires_at, t.rotated_at, t.revoked OR COALESCE(g.revoked, false)`

const tokenFrom = `oauth_tokens t LEFT JOIN oauth_grants g ON g.id = t.grant_id`

func scanToken(row pgx.Row) (*chartctl.OAuthToken, error) {
	var (
		t            chartctl.OAuthToken
		kind         string
		scopes       []string
		createdAt    time.Time
		expiresAt    time.Time
		rotatedAt    *time.Time
		grantRevoked bool
	)
	if err := row.Scan(&t.ID, &t.Hash, &kind, &t.GrantID, &t.ParentID, &t.ClientID, &t.UserID, &scopes,
		&createdAt, &expiresAt, &rotatedAt, &grantRevoked); err != nil {
		return nil, err
	}
	t.Kind, t.Scopes, t.Revoked = chartctl.OAuthTokenKind(kind), scopesOf(scopes), grantRevoked
	t.CreatedAt, t.ExpiresAt, t.RotatedAt = utc(createdAt), utc(expiresAt), utcPtr(rotatedAt)
	return &t, nil
}

// RotateRefreshToken exchanges a refresh token for the tokens check
// returns, in one transaction holding the token's row lock. A reused
// (already rotated) token revokes its grant: that revocation commits, and
// the call then returns ECONFLICT.
func (db *DB) RotateRefreshToken(ctx context.Context, h []byte, now time.Time, check func(*chartctl.OAuthToken) ([]*chartctl.OAuthToken, error)) error {
	if len(h) == 0 {
		return invalidRefresh()
	}
	reused := false
	err := db.tx(ctx, "rotate refresh token", func(tx pgx.Tx) error {
		reused = false
		t, err := scanToken(tx.QueryRow(ctx, `SELECT `+tokenCols+` FROM `+tokenFrom+` WHERE t.hash = $1 FOR UPDATE OF t`, h))
		if errors.Is(err, pgx.ErrNoRows) {
			return invalidRefresh()
		} else if err != nil {
			return err
		}
		if t.Kind != chartctl.RefreshToken {
			return invalidRefresh()
		}
		if t.RotatedAt != nil {
			reused = true
			return revokeGrant(ctx, tx, t.GrantID, db.now())
		}
		if t.Revoked || t.Expired(now) {
			return invalidRefresh()
		}
		tokens, err := check(t)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_tokens SET rotated_at = $2 WHERE hash = $1`, h, now.UTC()); err != nil {
			return err
		}
		return db.putTokens(ctx, tx, tokens)
	})
	if err != nil {
		return err
	}
	if reused {
		return chartctl.Errorf(chartctl.ECONFLICT, "The refresh token was already used; its grant is revoked.")
	}
	return nil
}

// putTokens stores new tokens, filling their IDs and CreatedAt.
func (db *DB) putTokens(ctx context.Context, tx pgx.Tx, tokens []*chartctl.OAuthToken) error {
	for _, t := range tokens {
		if len(t.Hash) == 0 || t.GrantID == "" {
			return chartctl.Invalid("token", "A token needs a hash and a grant ID.")
		}
		if err := db.fill(&t.ID, prefixOAuthToken, &t.CreatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO oauth_tokens
			(hash, id, kind, grant_id, parent_id, client_id, user_id, scopes, created_at, expires_at, rotated_at, revoked)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			t.Hash, t.ID, string(t.Kind), t.GrantID, t.ParentID, t.ClientID, t.UserID, nonNil(t.Scopes.Strings()),
			t.CreatedAt, t.ExpiresAt, t.RotatedAt, t.Revoked)
		if isUnique(err, "oauth_tokens_pkey") || isUnique(err, "oauth_tokens_id_key") {
			return chartctl.Errorf(chartctl.ECONFLICT, "A token with this value already exists.")
		} else if err != nil {
			return err
		}
	}
	return nil
}

// grantsLock is the first key of the advisory locks on a (user, client)
// pair's grants ("GR").
const grantsLock int32 = 0x4752

// revokeExcessGrants revokes the oldest live grants of userID for
// clientID beyond chartctl.MaxOAuthGrants, keeping newest (the grant just
// started). A transaction-level advisory lock on the pair makes
// concurrent redemptions on any replicas count one after the other.
func revokeExcessGrants(ctx context.Context, tx pgx.Tx, userID, clientID, newest string, now time.Time) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, grantsLock, userID+"/"+clientID); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT t.grant_id FROM `+tokenFrom+`
		WHERE t.user_id = $1 AND t.client_id = $2 AND t.grant_id <> $3
		  AND NOT t.revoked AND t.expires_at > $4 AND NOT COALESCE(g.revoked, false)
		GROUP BY t.grant_id ORDER BY MIN(t.created_at) DESC, t.grant_id DESC OFFSET $5`,
		userID, clientID, newest, now.UTC(), chartctl.MaxOAuthGrants-1)
	if err != nil {
		return err
	}
	old, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range old {
		if err := revokeGrant(ctx, tx, id, now.UTC()); err != nil {
			return err
		}
	}
	return nil
}

// revokeGrant records grant id as revoked, whether or not it was recorded.
func revokeGrant(ctx context.Context, q querier, id string, at time.Time) error {
	_, err := q.Exec(ctx, `INSERT INTO oauth_grants (id, revoked, created_at) VALUES ($1, true, $2)
		ON CONFLICT (id) DO UPDATE SET revoked = true`, id, at)
	return err
}

// OAuthToken returns the token whose hash is h, with Revoked set when it or
// its grant was revoked. It returns ENOTFOUND if none.
func (db *DB) OAuthToken(ctx context.Context, h []byte) (*chartctl.OAuthToken, error) {
	if len(h) == 0 {
		return nil, tokenNotFound()
	}
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM `+tokenFrom+` WHERE t.hash = $1`, h))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, tokenNotFound()
	}
	return t, db.wrap("get oauth token", err)
}

func tokenNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Token not found.") }

// RevokeOAuthToken revokes the token whose hash is h; for a refresh token,
// its whole grant. It returns ENOTFOUND if none.
func (db *DB) RevokeOAuthToken(ctx context.Context, h []byte) error {
	if len(h) == 0 {
		return tokenNotFound()
	}
	err := db.tx(ctx, "revoke oauth token", func(tx pgx.Tx) error {
		var kind, grant string
		err := tx.QueryRow(ctx, `UPDATE oauth_tokens SET revoked = true WHERE hash = $1 RETURNING kind, grant_id`, h).Scan(&kind, &grant)
		if errors.Is(err, pgx.ErrNoRows) {
			return tokenNotFound()
		} else if err != nil {
			return err
		}
		if kind == string(chartctl.RefreshToken) {
			return revokeGrant(ctx, tx, grant, db.now())
		}
		return nil
	})
	if err == nil {
		db.credentialsChanged(ctx)
	}
	return err
}

// RevokeGrant revokes every token of the grant id, including any issued for
// it later.
func (db *DB) RevokeGrant(ctx context.Context, id string) error {
	if id == "" {
		return chartctl.Invalid("grant", "A grant ID is required.")
	}
	if err := revokeGrant(ctx, db.pool, id, db.now()); err != nil {
		return db.wrap("revoke grant", err)
	}
	db.credentialsChanged(ctx)
	return nil
}

// DeleteExpiredOAuth removes codes, tokens and sessions that expired
// before now, in one transaction. Grant records stay, so a revoked grant
// stays revoked.
func (db *DB) DeleteExpiredOAuth(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := db.tx(ctx, "delete expired oauth records", func(tx pgx.Tx) error {
		n = 0
		for _, table := range []string{"oauth_codes", "oauth_tokens", "web_sessions", "oauth_device_codes"} {
			tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE expires_at < $1`, now.UTC())
			if err != nil {
				return err
			}
			n += int(tag.RowsAffected())
		}
		return nil
	})
	return n, err
}

// CreateWebSession stores s, filling CreatedAt when zero; a session with
// the same hash is replaced. It returns EINVALID if the hash is empty.
func (db *DB) CreateWebSession(ctx context.Context, s *chartctl.WebSession) error {
	if len(s.Hash) == 0 {
		return chartctl.Invalid("session", "A session hash is required.")
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = db.now()
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO web_sessions (hash, user_id, csrf_token, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (hash) DO UPDATE SET user_id = EXCLUDED.user_id, csrf_token = EXCLUDED.csrf_token,
			created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
		s.Hash, s.UserID, s.CSRFToken, s.CreatedAt, s.ExpiresAt)
	return db.wrap("create web session", err)
}

// WebSession returns the session whose hash is h. It returns ENOTFOUND if
// none or it expired at now.
func (db *DB) WebSession(ctx context.Context, h []byte, now time.Time) (*chartctl.WebSession, error) {
	if len(h) == 0 {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Session not found.")
	}
	var s chartctl.WebSession
	err := db.pool.QueryRow(ctx, `SELECT hash, user_id, csrf_token, created_at, expires_at FROM web_sessions WHERE hash = $1`, h).
		Scan(&s.Hash, &s.UserID, &s.CSRFToken, &s.CreatedAt, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Session not found.")
	} else if err != nil {
		return nil, db.wrap("get web session", err)
	}
	s.CreatedAt, s.ExpiresAt = utc(s.CreatedAt), utc(s.ExpiresAt)
	if s.Expired(now) {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Session expired.")
	}
	return &s, nil
}

// DeleteWebSession ends the session whose hash is h.
func (db *DB) DeleteWebSession(ctx context.Context, h []byte) error {
	if len(h) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `DELETE FROM web_sessions WHERE hash = $1`, h)
	return db.wrap("delete web session", err)
}

// DeleteUserWebSessions ends every session of userID but keep's, and
// returns how many it ended.
func (db *DB) DeleteUserWebSessions(ctx context.Context, userID string, keep []byte) (int, error) {
	if keep == nil {
		keep = []byte{}
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM web_sessions WHERE user_id = $1 AND hash <> $2`, userID, keep)
	if err != nil {
		return 0, db.wrap("delete user web sessions", err)
	}
	return int(tag.RowsAffected()), nil
}

// UserGrants returns userID's grants that are not revoked and hold a token
// unexpired at now, oldest first.
func (db *DB) UserGrants(ctx context.Context, userID string, now time.Time) ([]*chartctl.OAuthGrant, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+tokenCols+` FROM `+tokenFrom+` WHERE t.user_id = $1`, userID)
	if err != nil {
		return nil, db.wrap("list user grants", err)
	}
	defer rows.Close()
	var tokens []*chartctl.OAuthToken
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, db.wrap("list user grants", err)
		}
		tokens = append(tokens, t)
	}
	if err := rows.Err(); err != nil {
		return nil, db.wrap("list user grants", err)
	}
	return chartctl.LiveGrants(tokens, now), nil
}
