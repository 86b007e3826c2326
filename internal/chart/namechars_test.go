package chart

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// validNameChars is the rule `helm create` applies, with a letter or digit
// first: the regular expression it replaces must agree on every string.
func TestValidNameCharsIsTheRegularExpression(t *testing.T) {
	re := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
	check := func(s string) {
		if got, want := validNameChars(s), re.MatchString(s); got != want {
			t.Errorf("validNameChars(%q) = %v, the expression says %v", s, got, want)
		}
	}
	for _, s := range []string{"", "a", "A", "0", ".", "-", "_", "a.b", "a-", "-a", ".a", "_a", "a_b-c.d", "a/b", "a b", "é", "a\n", "a\x00"} {
		check(s)
	}
	alphabet := "aZ09._-/ \n\xff"
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(b))
	}
}
