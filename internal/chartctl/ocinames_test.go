package chartctl

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// ValidOCIName and ValidOCITag are the distribution specification's
// expressions, checked in one pass: they must agree with the expressions
// on every string.
func TestOCINamesAreTheSpecificationExpressions(t *testing.T) {
	nameRE := regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)
	tagRE := regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)
	check := func(s string) {
		if got, want := ValidOCIName(s), nameRE.MatchString(s) && len(s) <= 255; got != want {
			t.Errorf("ValidOCIName(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := ValidOCITag(s), tagRE.MatchString(s); got != want {
			t.Errorf("ValidOCITag(%q) = %v, the expression says %v", s, got, want)
		}
	}
	for _, s := range []string{
		"", "a", "a/b", "a//b", "/a", "a/", "a.b", "a..b", "a_b", "a__b", "a___b", "a-b", "a---b", "a-_b", "a._b", "a.", ".a",
		"A", "a/B", "team-charts/nginx", "v1.0.0", "_x", "-x", ".x", "1.0.0+build", "1.0.0_build", strings.Repeat("a", 255), strings.Repeat("a", 256),
		strings.Repeat("t", 128), strings.Repeat("t", 129), "a\n", "é",
	} {
		check(s)
	}
	alphabet := "az09AZ._-/+\n"
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		b := make([]byte, rng.IntN(9))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(b))
	}
}
