// Package identity holds what sign-in providers (OIDC today; LDAP and SCIM
// next, in packages of their own below this one) hand the application
// once a person has proved who they are at an identity provider. The
// providers know nothing of chartctl's users; internal/app decides what a
// sign-in does to them (just-in-time creation, linking, admin).
package identity

import "errors"

// Claims is a person as an identity provider vouches for them.
type Claims struct {
	// Provider is the kind of provider: chartctl.ProviderOIDC, ….
	Provider string
	// Issuer names the provider's instance (the OIDC issuer URL) and
	// Subject the account there; together they key the user.
	Issuer  string
	Subject string
	// Email is the account's email; EmailVerified whether the provider
	// says it verified it.
	Email         string
	EmailVerified bool
	// Name is a display name, "" if the provider sent none.
	Name string
	// Groups are the groups the provider lists for the account (the
	// configured claim); nil when the claim is absent.
	Groups []string
}

// Errors of providers that check a login and password themselves (LDAP).
// The sign-in page answers the first two alike, so that it never tells
// whether a login exists.
var (
	// ErrUnknownUser: the directory has no account for the login.
	ErrUnknownUser = errors.New("no such account in the directory")
	// ErrWrongPassword: the account exists and the password is wrong.
	ErrWrongPassword = errors.New("wrong password")
	// ErrUnavailable: the provider could not be asked (unreachable,
	// refused chartctl's own credentials, timed out). Wrapped with the
	// detail for the log.
	ErrUnavailable = errors.New("identity provider unavailable")
)
