// Package token makes and checks the service's secret values: API keys,
// OAuth access and refresh tokens. Values carry a recognizable prefix, 256
// bits of randomness and a CRC32 checksum suffix, so a mistyped or forged
// value is refused without a store lookup (as GitHub's token format does).
// Only a SHA-256 hash of a value is ever stored.
package token

import (
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"math/big"
	"strings"
)

// Prefixes of the kinds of values.
const (
	// APIKeyPrefix starts every API key.
	APIKeyPrefix = "chartctl_"
	// AccessTokenPrefix starts every OAuth access token.
	AccessTokenPrefix = "chartctl_at_"
	// RefreshTokenPrefix starts every OAuth refresh token.
	RefreshTokenPrefix = "chartctl_rt_"
	// RobotSecretPrefix starts every robot account's secret.
	RobotSecretPrefix = "chartctl_rb_"
	// ExchangedPrefix starts every short-lived credential exchanged for a
	// trusted publisher's OIDC token at /v1/oidc/token.
	ExchangedPrefix = "chartctl_ex_"
	// SCIMTokenPrefix starts every SCIM client's bearer token.
	SCIMTokenPrefix = "chartctl_scim_"
)

const (
	alphabet    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	bodyLen     = 43 // 62^43 > 2^256
	checksumLen = 6  // 62^6 > 2^32
)

// New returns a new random value with prefix and its hash.
func New(prefix string) (value string, hash []byte) {
	var buf [32]byte
	if _, err := rand.Read(buf[:]); err != nil {
		// crypto/rand.Read never fails on supported platforms (Go 1.24+
		// crashes the program instead), so this is unreachable.
		panic(err)
	}
	body := encode(new(big.Int).SetBytes(buf[:]), bodyLen)
	value = prefix + body + checksum(body)
	return value, Hash(value)
}

// Valid reports whether value has prefix and a correct checksum. It runs in
// time independent of where a forged value differs.
func Valid(prefix, value string) bool {
	if !strings.HasPrefix(value, prefix) {
		return false
	}
	rest := value[len(prefix):]
	if len(rest) != bodyLen+checksumLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !inAlphabet[rest[i]] {
			return false
		}
	}
	body, sum := rest[:bodyLen], rest[bodyLen:]
	return checksum(body) == sum
}

// inAlphabet marks the bytes of alphabet.
var inAlphabet = func() (t [256]bool) {
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = true
	}
	return t
}()

// checksum is the CRC32 of body in checksumLen base-62 digits. It runs on
// every authenticated request, so it avoids big.Int.
func checksum(body string) string {
	var out [checksumLen]byte
	n := uint64(crc32.ChecksumIEEE([]byte(body)))
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(out[:])
}

// Hash returns the SHA-256 of value: the form in which values are stored.
// The values carry 256 bits of randomness, so a fast hash suffices.
func Hash(value string) []byte {
	h := sha256.Sum256([]byte(value))
	return h[:]
}

func encode(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(int64(len(alphabet)))
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = alphabet[mod.Int64()]
	}
	return string(out)
}
