package token

import (
	"bytes"
	"strings"
	"testing"
)

func TestNewIsValidAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		v, h := New(APIKeyPrefix)
		if !Valid(APIKeyPrefix, v) {
			t.Fatalf("Valid(%q) = false", v)
		}
		if !bytes.Equal(h, Hash(v)) {
			t.Fatalf("hash mismatch for %q", v)
		}
		if seen[v] {
			t.Fatalf("duplicate value %q", v)
		}
		seen[v] = true
	}
}

func TestValidRejects(t *testing.T) {
	v, _ := New(APIKeyPrefix)
	body := strings.TrimPrefix(v, APIKeyPrefix)
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		return string(b)
	}
	cases := map[string]string{
		"empty":         "",
		"no prefix":     body,
		"wrong prefix":  "ghp_" + body,
		"short":         v[:len(v)-1],
		"long":          v + "A",
		"typo in body":  flip(v, len(APIKeyPrefix)+3),
		"typo in sum":   flip(v, len(v)-1),
		"bad character": v[:len(v)-2] + "!" + v[len(v)-1:],
		"access token":  strings.Replace(v, APIKeyPrefix, AccessTokenPrefix, 1),
	}
	for name, in := range cases {
		if Valid(APIKeyPrefix, in) {
			t.Errorf("%s: Valid(%q) = true", name, in)
		}
	}
}

func FuzzValid(f *testing.F) {
	v, _ := New(APIKeyPrefix)
	f.Add(v)
	f.Add("chartctl_")
	f.Fuzz(func(t *testing.T, s string) {
		Valid(APIKeyPrefix, s)
	})
}
