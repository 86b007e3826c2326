package app

import (
	"context"
	"errors"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// BucketKeys is the rate-limit bucket (§7) API key creation is charged to,
// per owner: each key has a global budget of its own, so making keys is
// limited or new keys would multiply that budget without bound.
const BucketKeys = "keys"

// RateLimited is the error of an action refused by a rate-limit bucket.
// Its chain holds the ERATELIMIT *chartctl.Error a person reads; Decision
// is the limiter's answer, for transports that report it (X-RateLimit-*,
// Retry-After).
type RateLimited struct {
	Err      *chartctl.Error
	Decision ratelimit.Decision
}

// Error implements error.
func (e *RateLimited) Error() string { return e.Err.Error() }

// Unwrap returns the *chartctl.Error, so chartctl.ErrorCode and
// ErrorMessage read it.
func (e *RateLimited) Unwrap() error { return e.Err }

// RateLimitedBy returns the *RateLimited in err's chain, nil if none.
func RateLimitedBy(err error) *RateLimited {
	var rl *RateLimited
	if errors.As(err, &rl) {
		return rl
	}
	return nil
}

// admitKey refuses a new key for owner past Config.MaxKeysPerUser, then
// charges owner's keys bucket. The cap is checked first so that a refusal
// for it costs no budget.
func (a *App) admitKey(ctx context.Context, owner *chartctl.User) error {
	if limit := a.Config.MaxKeysPerUser; limit > 0 {
		keys, err := a.Store.APIKeys(ctx, owner.ID)
		if err != nil {
			return err
		}
		if len(keys) >= limit {
			return chartctl.Errorf(chartctl.EFORBIDDEN, "%s already holds %d API keys, the most this server allows; revoke one first (Account settings → API keys, or chartctl api-key list / revoke).", owner.Email, len(keys))
		}
	}
	if a.Limits == nil {
		return nil
	}
	d := a.Limits.Take(ratelimit.Request{Bucket: BucketKeys, Key: owner.ID})
	if !d.Allowed {
		secs := int((d.RetryAfter + time.Second - 1) / time.Second)
		return &RateLimited{Decision: d, Err: chartctl.Errorf(chartctl.ERATELIMIT,
			"Too many API keys created recently (rate limit for %s); retry in %d seconds.", BucketKeys, max(secs, 1))}
	}
	return nil
}

// Password lengths accepted (bcrypt reads at most 72 bytes).
const (
	MinPasswordLength = 8
	MaxPasswordLength = 72
)

// ValidatePassword checks a new password's length. Returns EINVALID naming
// param.
func ValidatePassword(param, pw string) error {
	if len(pw) < MinPasswordLength || len(pw) > MaxPasswordLength {
		return chartctl.Invalid(param, "The password must be %d to %d characters long.", MinPasswordLength, MaxPasswordLength)
	}
	return nil
}

// ErrWrongPassword is the EINVALID error of ChangePassword when the
// current password does not match; transports count it as a failed
// sign-in.
var ErrWrongPassword = chartctl.Invalid("current_password", "The current password is not correct.")

// ChangePassword sets u's password to newPassword after checking
// current, then ends u's other dashboard sessions (those whose hash is
// not keep), as GitHub does: whoever else was signed in with the old
// password is signed out. API keys and OAuth grants stay; they are
// managed on their own pages. Returns ErrWrongPassword, EINVALID for a
// new password that is too short or too long, and EFORBIDDEN for an
// account without a password (a service account, or one that signs in
// through an identity provider).
func (a *App) ChangePassword(ctx context.Context, u *chartctl.User, current, newPassword string, keep []byte) error {
	if u.PasswordHash == "" {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "This account has no password to change: it signs in another way.")
	}
	if !CheckPassword(u.PasswordHash, current) {
		return ErrWrongPassword
	}
	if err := ValidatePassword("new_password", newPassword); err != nil {
		return err
	}
	if current == newPassword {
		return chartctl.Invalid("new_password", "The new password is the same as the current one; choose another.")
	}
	h, err := HashPassword(newPassword)
	if err != nil {
		return err
	}
	if _, err := a.Store.UpdateUser(a.Record(ctx, "user.password_change", u.Email, ""), u.ID, chartctl.UserUpdate{PasswordHash: &h}); err != nil {
		return err
	}
	u.PasswordHash = h
	if a.OAuth != nil {
		if _, err := a.OAuth.DeleteUserWebSessions(ctx, u.ID, keep); err != nil {
			return err
		}
	}
	return nil
}

// AuthorizedApp is an OAuth application a user has authorized: a live
// grant and its client.
type AuthorizedApp struct {
	Grant *chartctl.OAuthGrant
	// Client is the application; nil if it was deleted since.
	Client *chartctl.OAuthClient
}

// AuthorizedApps lists the OAuth applications u has authorized and not
// revoked, oldest first.
func (a *App) AuthorizedApps(ctx context.Context, u *chartctl.User) ([]AuthorizedApp, error) {
	if a.OAuth == nil {
		return nil, nil
	}
	grants, err := a.OAuth.UserGrants(ctx, u.ID, a.Now())
	if err != nil {
		return nil, err
	}
	out := make([]AuthorizedApp, 0, len(grants))
	for _, g := range grants {
		cl, err := a.OAuth.OAuthClient(ctx, g.ClientID)
		if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return nil, err
		}
		out = append(out, AuthorizedApp{Grant: g, Client: cl})
	}
	return out, nil
}

// RevokeAuthorizedApp ends u's grant id: its access and refresh tokens
// stop working at once, and any issued for it later are born revoked.
// Returns ENOTFOUND when id is not a live grant of u (another user's
// grant is not found either).
func (a *App) RevokeAuthorizedApp(ctx context.Context, u *chartctl.User, id string) (AuthorizedApp, error) {
	apps, err := a.AuthorizedApps(ctx, u)
	if err != nil {
		return AuthorizedApp{}, err
	}
	for _, ap := range apps {
		if ap.Grant.ID != id {
			continue
		}
		name := ap.Grant.ClientID
		if ap.Client != nil {
			name = ap.Client.Name
		}
		if err := a.OAuth.RevokeGrant(ctx, id); err != nil {
			return AuthorizedApp{}, err
		}
		// Grants are OAuth records, outside the store's change log: the
		// audit entry is written after the revocation.
		a.AuditSuccess(ctx, "oauth_grant.revoke", name, "")
		return ap, nil
	}
	return AuthorizedApp{}, chartctl.Errorf(chartctl.ENOTFOUND, "No such authorized application; it may have been revoked already.")
}
