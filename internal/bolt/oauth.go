package bolt

import (
	"bytes"
	"context"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB implements chartctl.OAuthStore.
var _ chartctl.OAuthStore = (*DB)(nil)

const prefixOAuthToken = "tok_"

type oauthClientRecord struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Public       bool      `json:"public,omitempty"`
	SecretHash   []byte    `json:"secret_hash,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

type oauthCodeRecord struct {
	Hash          []byte     `json:"hash"`
	ClientID      string     `json:"client_id"`
	UserID        string     `json:"user_id"`
	RedirectURI   string     `json:"redirect_uri"`
	Scopes        []string   `json:"scopes"`
	CodeChallenge string     `json:"code_challenge,omitempty"`
	GrantID       string     `json:"grant_id"`
	CreatedAt     time.Time  `json:"created_at"`
	ExpiresAt     time.Time  `json:"expires_at"`
	RedeemedAt    *time.Time `json:"redeemed_at,omitempty"`
}

type oauthTokenRecord struct {
	ID        string     `json:"id"`
	Hash      []byte     `json:"hash"`
	Kind      string     `json:"kind"`
	GrantID   string     `json:"grant_id"`
	ParentID  string     `json:"parent_id,omitempty"`
	ClientID  string     `json:"client_id"`
	UserID    string     `json:"user_id"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RotatedAt *time.Time `json:"rotated_at,omitempty"`
	Revoked   bool       `json:"revoked,omitempty"`
}

type oauthGrantRecord struct {
	ID        string    `json:"id"`
	Revoked   bool      `json:"revoked,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// expiryRecord reads only the expiry of a code, token or session record.
type expiryRecord struct {
	ExpiresAt time.Time `json:"expires_at"`
}

type webSessionRecord struct {
	Hash      []byte    `json:"hash"`
	UserID    string    `json:"user_id"`
	CSRFToken string    `json:"csrf_token"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func scopesOf(names []string) chartctl.Scopes {
	out := make(chartctl.Scopes, len(names))
	for i, s := range names {
		out[i] = chartctl.Scope(s)
	}
	return out
}

func (r *oauthClientRecord) domain() *chartctl.OAuthClient {
	return &chartctl.OAuthClient{ID: r.ID, Name: r.Name, RedirectURIs: r.RedirectURIs, Public: r.Public, SecretHash: r.SecretHash, CreatedAt: r.CreatedAt}
}

func (r *oauthCodeRecord) domain() *chartctl.AuthorizationCode {
	return &chartctl.AuthorizationCode{
		Hash: r.Hash, ClientID: r.ClientID, UserID: r.UserID, RedirectURI: r.RedirectURI,
		Scopes: scopesOf(r.Scopes), CodeChallenge: r.CodeChallenge, GrantID: r.GrantID,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RedeemedAt: r.RedeemedAt,
	}
}

func newOAuthTokenRecord(t *chartctl.OAuthToken) *oauthTokenRecord {
	return &oauthTokenRecord{
		ID: t.ID, Hash: t.Hash, Kind: string(t.Kind), GrantID: t.GrantID, ParentID: t.ParentID,
		ClientID: t.ClientID, UserID: t.UserID, Scopes: t.Scopes.Strings(),
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, RotatedAt: t.RotatedAt, Revoked: t.Revoked,
	}
}

func (r *oauthTokenRecord) domain() *chartctl.OAuthToken {
	return &chartctl.OAuthToken{
		ID: r.ID, Hash: r.Hash, Kind: chartctl.OAuthTokenKind(r.Kind), GrantID: r.GrantID, ParentID: r.ParentID,
		ClientID: r.ClientID, UserID: r.UserID, Scopes: scopesOf(r.Scopes),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RotatedAt: r.RotatedAt, Revoked: r.Revoked,
	}
}

// CreateOAuthClient stores c, filling CreatedAt when zero. It returns
// EINVALID if the ID is empty and ECONFLICT if it is taken.
func (db *DB) CreateOAuthClient(ctx context.Context, c *chartctl.OAuthClient) error {
	if c.ID == "" {
		return chartctl.Invalid("client_id", "A client ID is required.")
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = db.now()
	}
	return wrap("create oauth client", db.db.Update(func(tx *bbolt.Tx) error {
		b := bucket(tx, oauthClientsBucket)
		if b.Get([]byte(c.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "An OAuth client with ID %q already exists.", c.ID)
		}
		v, err := encode(&oauthClientRecord{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, Public: c.Public, SecretHash: c.SecretHash, CreatedAt: c.CreatedAt})
		if err != nil {
			return err
		}
		return b.Put([]byte(c.ID), v)
	}))
}

// OAuthClient returns the client with id. It returns ENOTFOUND if none.
func (db *DB) OAuthClient(ctx context.Context, id string) (*chartctl.OAuthClient, error) {
	var c *chartctl.OAuthClient
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, oauthClientsBucket).Get([]byte(id))
		if v == nil || id == "" {
			return chartctl.Errorf(chartctl.ENOTFOUND, "OAuth client not found.")
		}
		r, err := decode[oauthClientRecord](v)
		if err != nil {
			return err
		}
		c = r.domain()
		return nil
	})
	return c, wrap("get oauth client", err)
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
	return wrap("create authorization code", db.db.Update(func(tx *bbolt.Tx) error {
		b := bucket(tx, oauthCodesBucket)
		if b.Get(c.Hash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "This authorization code already exists.")
		}
		v, err := encode(&oauthCodeRecord{
			Hash: c.Hash, ClientID: c.ClientID, UserID: c.UserID, RedirectURI: c.RedirectURI,
			Scopes: c.Scopes.Strings(), CodeChallenge: c.CodeChallenge, GrantID: c.GrantID,
			CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt, RedeemedAt: c.RedeemedAt,
		})
		if err != nil {
			return err
		}
		return b.Put(c.Hash, v)
	}))
}

func invalidCode() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "The authorization code is invalid or expired.")
}

// RedeemAuthorizationCode exchanges a code for the tokens check returns, in
// one Update transaction, so of many concurrent redemptions exactly one
// succeeds. A code check refuses is consumed all the same. A reused code
// revokes its grant: that revocation commits, and the call then returns
// ECONFLICT.
func (db *DB) RedeemAuthorizationCode(ctx context.Context, h []byte, now time.Time, check func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error)) error {
	reused := false
	var refused error
	err := db.db.Update(func(tx *bbolt.Tx) error {
		refused = nil
		codes := bucket(tx, oauthCodesBucket)
		v := codes.Get(h)
		if v == nil || len(h) == 0 {
			return invalidCode()
		}
		r, err := decode[oauthCodeRecord](v)
		if err != nil {
			return err
		}
		if r.RedeemedAt != nil {
			reused = true
			return revokeGrant(tx, r.GrantID, db.now())
		}
		code := r.domain()
		if code.Expired(now) {
			return invalidCode()
		}
		tokens, checkErr := check(code)
		at := now.UTC().Round(0)
		r.RedeemedAt = &at
		if v, err = encode(r); err != nil {
			return err
		}
		if err := codes.Put(h, v); err != nil {
			return err
		}
		if checkErr != nil {
			// A refused attempt consumes the code too (RFC 6749 §4.1.2: a
			// code is single-use): this transaction commits the
			// redemption, and the check's error is returned after it.
			refused = checkErr
			return nil
		}
		if err := putGrant(tx, r.GrantID, at); err != nil {
			return err
		}
		if err := db.putTokens(tx, tokens); err != nil {
			return err
		}
		return revokeExcessGrants(tx, r.UserID, r.ClientID, r.GrantID, now)
	})
	if err != nil {
		return wrap("redeem authorization code", err)
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

// RotateRefreshToken exchanges a refresh token for the tokens check
// returns, in one Update transaction. A reused (already rotated) token
// revokes its grant: that revocation commits, and the call then returns
// ECONFLICT.
func (db *DB) RotateRefreshToken(ctx context.Context, h []byte, now time.Time, check func(*chartctl.OAuthToken) ([]*chartctl.OAuthToken, error)) error {
	reused := false
	err := db.db.Update(func(tx *bbolt.Tx) error {
		b := bucket(tx, oauthTokensBucket)
		v := b.Get(h)
		if v == nil || len(h) == 0 {
			return invalidRefresh()
		}
		r, err := decode[oauthTokenRecord](v)
		if err != nil {
			return err
		}
		if r.Kind != string(chartctl.RefreshToken) {
			return invalidRefresh()
		}
		if r.RotatedAt != nil {
			reused = true
			return revokeGrant(tx, r.GrantID, db.now())
		}
		t := r.domain()
		t.Revoked = t.Revoked || grantRevoked(tx, r.GrantID)
		if t.Revoked || t.Expired(now) {
			return invalidRefresh()
		}
		tokens, err := check(t)
		if err != nil {
			return err
		}
		at := now.UTC().Round(0)
		r.RotatedAt = &at
		if v, err = encode(r); err != nil {
			return err
		}
		if err := b.Put(h, v); err != nil {
			return err
		}
		return db.putTokens(tx, tokens)
	})
	if err != nil {
		return wrap("rotate refresh token", err)
	}
	if reused {
		return chartctl.Errorf(chartctl.ECONFLICT, "The refresh token was already used; its grant is revoked.")
	}
	return nil
}

// putTokens stores new tokens, filling their IDs and CreatedAt.
func (db *DB) putTokens(tx *bbolt.Tx, tokens []*chartctl.OAuthToken) error {
	b := bucket(tx, oauthTokensBucket)
	for _, t := range tokens {
		if len(t.Hash) == 0 || t.GrantID == "" {
			return chartctl.Invalid("token", "A token needs a hash and a grant ID.")
		}
		if err := db.fill(&t.ID, prefixOAuthToken, &t.CreatedAt); err != nil {
			return err
		}
		if b.Get(t.Hash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A token with this value already exists.")
		}
		v, err := encode(newOAuthTokenRecord(t))
		if err != nil {
			return err
		}
		if err := b.Put(t.Hash, v); err != nil {
			return err
		}
	}
	return nil
}

// putGrant records a grant as live unless it is already recorded (a
// revoked grant stays revoked).
func putGrant(tx *bbolt.Tx, id string, at time.Time) error {
	b := bucket(tx, oauthGrantsBucket)
	if b.Get([]byte(id)) != nil {
		return nil
	}
	v, err := encode(&oauthGrantRecord{ID: id, CreatedAt: at})
	if err != nil {
		return err
	}
	return b.Put([]byte(id), v)
}

func revokeGrant(tx *bbolt.Tx, id string, at time.Time) error {
	b := bucket(tx, oauthGrantsBucket)
	r := &oauthGrantRecord{ID: id, CreatedAt: at}
	if v := b.Get([]byte(id)); v != nil {
		old, err := decode[oauthGrantRecord](v)
		if err != nil {
			return err
		}
		r = old
	}
	r.Revoked = true
	v, err := encode(r)
	if err != nil {
		return err
	}
	return b.Put([]byte(id), v)
}

// revokeExcessGrants revokes the oldest live grants of userID for
// clientID beyond chartctl.MaxOAuthGrants, keeping newest (the grant just
// started). Grants are found through their tokens: a grant whose tokens
// all expired is dead already, and expired tokens are swept.
func revokeExcessGrants(tx *bbolt.Tx, userID, clientID, newest string, now time.Time) error {
	type live struct {
		id    string
		since time.Time
	}
	byID := map[string]*live{}
	err := bucket(tx, oauthTokensBucket).ForEach(func(_, v []byte) error {
		r, err := decode[oauthTokenRecord](v)
		if err != nil {
			return err
		}
		if r.UserID != userID || r.ClientID != clientID || r.GrantID == newest || r.Revoked || !now.Before(r.ExpiresAt) {
			return nil
		}
		if g := byID[r.GrantID]; g == nil {
			byID[r.GrantID] = &live{r.GrantID, r.CreatedAt}
		} else if r.CreatedAt.Before(g.since) {
			g.since = r.CreatedAt
		}
		return nil
	})
	if err != nil {
		return err
	}
	grants := make([]*live, 0, len(byID))
	for _, g := range byID {
		if !grantRevoked(tx, g.id) {
			grants = append(grants, g)
		}
	}
	if len(grants) < chartctl.MaxOAuthGrants {
		return nil
	}
	// Newest first (ties by ID, as the PostgreSQL store orders them);
	// everything past the newest MaxOAuthGrants-1 goes.
	sort.Slice(grants, func(i, j int) bool {
		if !grants[i].since.Equal(grants[j].since) {
			return grants[i].since.After(grants[j].since)
		}
		return grants[i].id > grants[j].id
	})
	for _, g := range grants[chartctl.MaxOAuthGrants-1:] {
		if err := revokeGrant(tx, g.id, now.UTC()); err != nil {
			return err
		}
	}
	return nil
}

func grantRevoked(tx *bbolt.Tx, id string) bool {
	v := bucket(tx, oauthGrantsBucket).Get([]byte(id))
	if v == nil {
		return false
	}
	r, err := decode[oauthGrantRecord](v)
	// An unreadable grant record is treated as revoked: failing closed.
	return err != nil || r.Revoked
}

// OAuthToken returns the token whose hash is h, with Revoked set when it or
// its grant was revoked. It returns ENOTFOUND if none.
func (db *DB) OAuthToken(ctx context.Context, h []byte) (*chartctl.OAuthToken, error) {
	var t *chartctl.OAuthToken
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, oauthTokensBucket).Get(h)
		if v == nil || len(h) == 0 {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Token not found.")
		}
		r, err := decode[oauthTokenRecord](v)
		if err != nil {
			return err
		}
		t = r.domain()
		t.Revoked = t.Revoked || grantRevoked(tx, r.GrantID)
		return nil
	})
	return t, wrap("get oauth token", err)
}

// RevokeOAuthToken revokes the token whose hash is h; for a refresh token,
// its whole grant. It returns ENOTFOUND if none.
func (db *DB) RevokeOAuthToken(ctx context.Context, h []byte) error {
	return wrap("revoke oauth token", db.db.Update(func(tx *bbolt.Tx) error {
		b := bucket(tx, oauthTokensBucket)
		v := b.Get(h)
		if v == nil || len(h) == 0 {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Token not found.")
		}
		r, err := decode[oauthTokenRecord](v)
		if err != nil {
			return err
		}
		if r.Kind == string(chartctl.RefreshToken) {
			if err := revokeGrant(tx, r.GrantID, db.now()); err != nil {
				return err
			}
		}
		r.Revoked = true
		if v, err = encode(r); err != nil {
			return err
		}
		return b.Put(h, v)
	}))
}

// RevokeGrant revokes every token of the grant id, including any issued for
// it later.
func (db *DB) RevokeGrant(ctx context.Context, id string) error {
	if id == "" {
		return chartctl.Invalid("grant", "A grant ID is required.")
	}
	return wrap("revoke grant", db.db.Update(func(tx *bbolt.Tx) error {
		return revokeGrant(tx, id, db.now())
	}))
}

// DeleteExpiredOAuth removes codes, tokens and sessions that expired
// before now. Grant records stay, so a revoked grant stays revoked.
func (db *DB) DeleteExpiredOAuth(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := db.db.Update(func(tx *bbolt.Tx) error {
		for _, name := range []string{oauthCodesBucket, oauthTokensBucket, webSessionsBucket} {
			dead, err := deleteMatching(bucket(tx, name), func(_ []byte, r expiryRecord) bool { return r.ExpiresAt.Before(now) })
			if err != nil {
				return err
			}
			n += dead
		}
		dead, err := deleteExpiredDevices(tx, now)
		n += dead
		return err
	})
	return n, wrap("delete expired oauth records", err)
}

// CreateWebSession stores s, filling CreatedAt when zero. It returns
// EINVALID if the hash is empty.
func (db *DB) CreateWebSession(ctx context.Context, s *chartctl.WebSession) error {
	if len(s.Hash) == 0 {
		return chartctl.Invalid("session", "A session hash is required.")
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = db.now()
	}
	return wrap("create web session", db.db.Update(func(tx *bbolt.Tx) error {
		v, err := encode(&webSessionRecord{Hash: s.Hash, UserID: s.UserID, CSRFToken: s.CSRFToken, CreatedAt: s.CreatedAt, ExpiresAt: s.ExpiresAt})
		if err != nil {
			return err
		}
		return bucket(tx, webSessionsBucket).Put(s.Hash, v)
	}))
}

// WebSession returns the session whose hash is h. It returns ENOTFOUND if
// none or it expired at now.
func (db *DB) WebSession(ctx context.Context, h []byte, now time.Time) (*chartctl.WebSession, error) {
	var s *chartctl.WebSession
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, webSessionsBucket).Get(h)
		if v == nil || len(h) == 0 {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Session not found.")
		}
		r, err := decode[webSessionRecord](v)
		if err != nil {
			return err
		}
		s = &chartctl.WebSession{Hash: r.Hash, UserID: r.UserID, CSRFToken: r.CSRFToken, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
		if s.Expired(now) {
			s = nil
			return chartctl.Errorf(chartctl.ENOTFOUND, "Session expired.")
		}
		return nil
	})
	return s, wrap("get web session", err)
}

// DeleteWebSession ends the session whose hash is h.
func (db *DB) DeleteWebSession(ctx context.Context, h []byte) error {
	if len(h) == 0 {
		return nil
	}
	return wrap("delete web session", db.db.Update(func(tx *bbolt.Tx) error {
		return bucket(tx, webSessionsBucket).Delete(h)
	}))
}

// OAuthClients returns every registered OAuth client, by ID (for
// `chartctl admin migrate`).
func (db *DB) OAuthClients(ctx context.Context) ([]*chartctl.OAuthClient, error) {
	var out []*chartctl.OAuthClient
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, oauthClientsBucket).ForEach(func(_, v []byte) error {
			r, err := decode[oauthClientRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	return out, wrap("list oauth clients", err)
}

// DeleteUserWebSessions ends every session of userID but keep's, and
// returns how many it ended.
func (db *DB) DeleteUserWebSessions(ctx context.Context, userID string, keep []byte) (int, error) {
	n := 0
	err := db.db.Update(func(tx *bbolt.Tx) error {
		var err error
		n, err = deleteMatching(bucket(tx, webSessionsBucket), func(k []byte, r webSessionRecord) bool {
			return r.UserID == userID && !bytes.Equal(k, keep)
		})
		return err
	})
	return n, wrap("delete user web sessions", err)
}

// UserGrants returns userID's grants that are not revoked and hold a token
// unexpired at now, oldest first. Tokens are kept by hash, so this reads
// them all; the hourly sweep of expired ones keeps that bounded by the
// live tokens.
func (db *DB) UserGrants(ctx context.Context, userID string, now time.Time) ([]*chartctl.OAuthGrant, error) {
	var tokens []*chartctl.OAuthToken
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, oauthTokensBucket).ForEach(func(_, v []byte) error {
			r, err := decode[oauthTokenRecord](v)
			if err != nil {
				return err
			}
			if r.UserID == userID {
				t := r.domain()
				t.Revoked = t.Revoked || grantRevoked(tx, r.GrantID)
				tokens = append(tokens, t)
			}
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list user grants", err)
	}
	return chartctl.LiveGrants(tokens, now), nil
}
