package app

import (
	"net/mail"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ValidateEmail checks and normalizes an email address (lower case, no
// display name). Returns EINVALID naming "email".
func ValidateEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", chartctl.Invalid("email", "email is required.")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") && !strings.HasSuffix(s, "@localhost") {
		return "", chartctl.Invalid("email", "Invalid email address %q.", s)
	}
	return strings.ToLower(s), nil
}

// MaxNameLength is the most characters the name of an API key or an OAuth
// client may have.
const MaxNameLength = 100

// ValidateName trims and checks the name of an API key or an OAuth client
// (what names it: "key", "client"). Returns EINVALID naming "name", saying
// whether the name is missing or too long.
func ValidateName(what, s string) (string, error) {
	s = strings.TrimSpace(s)
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return "", chartctl.Invalid("name", "name is required: give the %s a name of 1 to %d characters, such as \"CI deploys\".", what, MaxNameLength)
	case n > MaxNameLength:
		return "", chartctl.Invalid("name", "name is too long (%d characters): give the %s a name of at most %d characters.", n, what, MaxNameLength)
	}
	return s, nil
}

// HashPassword hashes a password with bcrypt.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// CheckPassword reports whether pw matches the bcrypt hash.
func CheckPassword(hash, pw string) bool {
	return hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
