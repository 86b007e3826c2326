package resetpassword

import (
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		p := Generate()
		if len(p) != 20 || strings.Trim(p, alphabet) != "" {
			t.Fatalf("Generate() = %q", p)
		}
		if seen[p] {
			t.Fatalf("Generate repeated %q", p)
		}
		seen[p] = true
	}
}
