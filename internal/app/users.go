package app

import (
	"net/mail"
	"strings"

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
