package chartctl

import (
	"context"
	"sort"
	"time"
)

// OAuthClient is an application registered to obtain access tokens through
// the authorization code flow. Only a hash of a confidential client's
// secret is stored.
type OAuthClient struct {
	// ID is the client_id.
	ID   string
	Name string
	// RedirectURIs are the registered redirect URIs, compared as exact
	// strings.
	RedirectURIs []string
	// Public clients (CLIs, single-page apps) have no secret.
	Public bool
	// SecretHash is the hash of a confidential client's secret.
	SecretHash []byte
	CreatedAt  time.Time
}

// AuthorizationCode is an issued, not yet redeemed (or already redeemed)
// authorization code. It is stored by the hash of its value.
type AuthorizationCode struct {
	Hash        []byte
	ClientID    string
	UserID      string
	RedirectURI string
	Scopes      Scopes
	// CodeChallenge is the PKCE S256 challenge the code is bound to.
	CodeChallenge string
	// GrantID names the grant (token family) redeeming the code starts;
	// reusing the code revokes it.
	GrantID   string
	CreatedAt time.Time
	ExpiresAt time.Time
	// RedeemedAt is set once the code has been exchanged.
	RedeemedAt *time.Time
}

// Expired reports whether the code has expired at now.
func (c *AuthorizationCode) Expired(now time.Time) bool { return !now.Before(c.ExpiresAt) }

// OAuthTokenKind tells access tokens from refresh tokens.
type OAuthTokenKind string

// The kinds of OAuth tokens.
const (
	AccessToken  OAuthTokenKind = "access"
	RefreshToken OAuthTokenKind = "refresh"
)

// OAuthToken is an issued access or refresh token, stored by the hash of its
// value. The tokens issued for one authorization code, and those issued by
// refreshing them, form one family: a grant.
type OAuthToken struct {
	ID   string
	Hash []byte
	Kind OAuthTokenKind
	// GrantID names the token's family.
	GrantID string
	// ParentID is the ID of the refresh token this token was issued by
	// rotating, "" for tokens issued for an authorization code.
	ParentID  string
	ClientID  string
	UserID    string
	Scopes    Scopes
	CreatedAt time.Time
	ExpiresAt time.Time
	// RotatedAt is set on a refresh token once it has been exchanged.
	RotatedAt *time.Time
	// Revoked is true when the token or its whole grant was revoked.
	Revoked bool
}

// Expired reports whether the token has expired at now.
func (t *OAuthToken) Expired(now time.Time) bool { return !now.Before(t.ExpiresAt) }

// WebSession is a signed-in browser session of the dashboard (and of the
// OAuth sign-in and consent pages). It is stored by the hash of the cookie
// value.
type WebSession struct {
	Hash   []byte
	UserID string
	// CSRFToken must accompany every form the session posts.
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Expired reports whether the session has expired at now.
func (s *WebSession) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// MaxOAuthGrants bounds the live grants one user holds for one OAuth
// client. Redeeming a code for an eleventh revokes the oldest, with its
// tokens, as GitHub does for its OAuth apps: an application that runs the
// flow again and again (or a script approving in a loop) cannot pile up
// token families, and each family no longer brings a budget of its own.
const MaxOAuthGrants = 10

// OAuthStore keeps OAuth clients, codes, tokens and dashboard sessions.
// Implementations must be safe for concurrent use; every method is atomic.
type OAuthStore interface {
	// CreateOAuthClient stores c, filling CreatedAt when zero. Returns
	// ECONFLICT if the client ID is taken, EINVALID if it is empty.
	CreateOAuthClient(ctx context.Context, c *OAuthClient) error
	// OAuthClient returns the client with id. Returns ENOTFOUND.
	OAuthClient(ctx context.Context, id string) (*OAuthClient, error)

	// CreateAuthorizationCode stores c. Returns EINVALID if its hash or
	// grant ID is empty, ECONFLICT if the hash exists.
	CreateAuthorizationCode(ctx context.Context, c *AuthorizationCode) error
	// RedeemAuthorizationCode exchanges the code whose hash is h, in one
	// transaction: check is called with the stored code and returns the
	// tokens to issue for it, or an error that is returned unchanged. Either
	// way the code is marked redeemed: a code is single-use, and a refused
	// attempt (a wrong PKCE verifier, another client) makes it unusable
	// (RFC 6749 §4.1.2), so a guesser gets one try. On success its grant
	// is recorded and the tokens stored; an error storing them leaves the
	// code as it was. In the same transaction, if the code's user then
	// holds more than MaxOAuthGrants live grants (grants not revoked with
	// a token not revoked nor expired at now) for the code's client, the
	// oldest of them (by their first token) are revoked. Returns ENOTFOUND if no
	// such code exists or it expired at now, and ECONFLICT if it was
	// already redeemed, in which case its grant (every token issued for
	// it) has been revoked.
	RedeemAuthorizationCode(ctx context.Context, h []byte, now time.Time, check func(*AuthorizationCode) ([]*OAuthToken, error)) error
	// RotateRefreshToken exchanges the refresh token whose hash is h, in
	// one transaction: check is called with the stored token and returns
	// the tokens to issue, or an error that is returned unchanged. On
	// success the old token is marked rotated and the new ones stored.
	// Returns ENOTFOUND if no such refresh token exists, or it expired at
	// now or was revoked, and ECONFLICT if it was already rotated, in which
	// case its grant (the tokens issued after it) has been revoked.
	RotateRefreshToken(ctx context.Context, h []byte, now time.Time, check func(*OAuthToken) ([]*OAuthToken, error)) error
	// OAuthToken returns the token whose hash is h, with Revoked set when
	// it or its grant was revoked. Returns ENOTFOUND.
	OAuthToken(ctx context.Context, h []byte) (*OAuthToken, error)
	// RevokeOAuthToken revokes the token whose hash is h; revoking a
	// refresh token revokes its whole grant. Returns ENOTFOUND.
	RevokeOAuthToken(ctx context.Context, h []byte) error
	// RevokeGrant revokes every token of the grant id, and any issued for
	// it later. Revoking an unknown grant records it as revoked.
	RevokeGrant(ctx context.Context, id string) error
	// DeleteExpiredOAuth removes codes, tokens and sessions that expired
	// before now, and returns how many records it removed.
	DeleteExpiredOAuth(ctx context.Context, now time.Time) (int, error)

	// CreateWebSession stores s. Returns EINVALID if its hash is empty.
	CreateWebSession(ctx context.Context, s *WebSession) error
	// WebSession returns the session whose hash is h. Returns ENOTFOUND if
	// none or it expired at now.
	WebSession(ctx context.Context, h []byte, now time.Time) (*WebSession, error)
	// DeleteWebSession ends the session whose hash is h; ending an unknown
	// session succeeds.
	DeleteWebSession(ctx context.Context, h []byte) error
	// DeleteUserWebSessions ends every session of userID except the one
	// whose hash is keep (nil ends them all), and returns how many it
	// ended.
	DeleteUserWebSessions(ctx context.Context, userID string, keep []byte) (int, error)

	// UserGrants returns userID's live grants: those not revoked that hold
	// a token unexpired at now, oldest first.
	UserGrants(ctx context.Context, userID string, now time.Time) ([]*OAuthGrant, error)

	// CreateDeviceAuthorization stores d. Returns EINVALID if a hash is
	// empty, ECONFLICT if its device code hash exists or its user code hash
	// belongs to a request not expired at d.CreatedAt.
	CreateDeviceAuthorization(ctx context.Context, d *DeviceAuthorization) error
	// DeviceAuthorizationByUserCode returns the request whose user code
	// hash is h. Returns ENOTFOUND if none, or it expired at now.
	DeviceAuthorizationByUserCode(ctx context.Context, h []byte, now time.Time) (*DeviceAuthorization, error)
	// DecideDeviceAuthorization records a person's answer to the request
	// whose user code hash is h, in one transaction: decide is called with
	// the stored request and sets Status (and, to approve, UserID, Scopes
	// and GrantID), or returns an error that is returned unchanged with
	// nothing stored. Returns ENOTFOUND if no such request exists or it
	// expired at now, and ECONFLICT if it was already decided.
	DecideDeviceAuthorization(ctx context.Context, h []byte, now time.Time, decide func(*DeviceAuthorization) error) error
	// PollDeviceAuthorization is a device's poll for the request whose
	// device code hash is h, in one transaction: poll is called with the
	// stored request (expired ones included, with LastPolledAt the previous
	// poll) and returns the tokens to issue, or an error. Either way the
	// poll's time and the Interval poll leaves are stored, and the error is
	// returned after that. On success the request is marked redeemed, its
	// grant recorded, the tokens stored and the user's excess grants for
	// the client revoked as RedeemAuthorizationCode does. Returns ENOTFOUND
	// if no such request exists, and ECONFLICT if it was already redeemed
	// (a device code is single use).
	PollDeviceAuthorization(ctx context.Context, h []byte, now time.Time, poll func(*DeviceAuthorization) ([]*OAuthToken, error)) error
}

// DeviceStatus is where a device authorization request stands.
type DeviceStatus string

// The states of a device authorization request.
const (
	DevicePending  DeviceStatus = "pending"
	DeviceApproved DeviceStatus = "approved"
	DeviceDenied   DeviceStatus = "denied"
)

// DeviceAuthorization is a device authorization request (RFC 8628): a
// device (the CLI on a machine without a browser) polls with the device
// code while a person enters the user code in a browser and approves or
// denies. Both codes are stored by their hash only.
type DeviceAuthorization struct {
	DeviceCodeHash []byte
	// UserCodeHash is the hash of the user code in its normal form
	// (upper case, without the dash).
	UserCodeHash []byte
	ClientID     string
	// Scopes are those asked for, then, once approved, those granted.
	Scopes Scopes
	// Interval is the least time between polls; slow_down raises it.
	Interval  time.Duration
	CreatedAt time.Time
	ExpiresAt time.Time
	// LastPolledAt is the time of the latest poll, nil before the first.
	LastPolledAt *time.Time
	Status       DeviceStatus
	// UserID is who approved or denied; GrantID names the grant the
	// tokens issued for an approved request start.
	UserID  string
	GrantID string
	// RedeemedAt is set once tokens were issued for the request.
	RedeemedAt *time.Time
}

// Expired reports whether the request has expired at now.
func (d *DeviceAuthorization) Expired(now time.Time) bool { return !now.Before(d.ExpiresAt) }

// OAuthGrant is a user's authorization of an OAuth client, as the tokens
// of one grant (one family, revoked as one) describe it.
type OAuthGrant struct {
	ID       string
	ClientID string
	UserID   string
	// Scopes are those of the grant's newest token.
	Scopes Scopes
	// CreatedAt is when the grant's first token stored was issued,
	// RefreshedAt when its newest was.
	CreatedAt   time.Time
	RefreshedAt time.Time
	// ExpiresAt is when the last of its tokens expires.
	ExpiresAt time.Time
}

// LiveGrants folds a user's tokens (Revoked set when they or their grant
// were revoked) into the grants that are still live at now: those with a
// token neither revoked nor expired. Grants come oldest first.
func LiveGrants(tokens []*OAuthToken, now time.Time) []*OAuthGrant {
	byID := map[string]*OAuthGrant{}
	var order []*OAuthGrant
	for _, t := range tokens {
		g := byID[t.GrantID]
		if g == nil {
			g = &OAuthGrant{ID: t.GrantID, ClientID: t.ClientID, UserID: t.UserID, CreatedAt: t.CreatedAt}
			byID[t.GrantID] = g
			order = append(order, g)
		}
		if t.CreatedAt.Before(g.CreatedAt) {
			g.CreatedAt = t.CreatedAt
		}
		if !t.CreatedAt.Before(g.RefreshedAt) {
			g.RefreshedAt, g.Scopes = t.CreatedAt, t.Scopes
		}
		if !t.Revoked && !t.Expired(now) && t.ExpiresAt.After(g.ExpiresAt) {
			g.ExpiresAt = t.ExpiresAt
		}
	}
	out := order[:0]
	for _, g := range order {
		if !g.ExpiresAt.IsZero() {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
