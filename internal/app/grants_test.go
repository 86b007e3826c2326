package app_test

import (
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// A key made by a restricted credential is restricted within its
// patterns: the same patterns, or plain names they match; never wider.
func TestRepoPatternsWithin(t *testing.T) {
	for _, c := range []struct {
		ceiling, patterns []string
		ok                bool
	}{
		{nil, nil, true},
		{nil, []string{"*"}, true},
		{[]string{"acme-*"}, nil, false},
		{[]string{"acme-*"}, []string{}, false},
		{[]string{"acme-*"}, []string{"acme-*"}, true},
		{[]string{"acme-*"}, []string{"acme-charts"}, true},
		{[]string{"acme-*", "web"}, []string{"web", "acme-x"}, true},
		{[]string{"acme-*"}, []string{"acme-charts", "web"}, false},
		{[]string{"acme-*"}, []string{"*"}, false},
		{[]string{"acme-*"}, []string{"acme-[a-z]*"}, false},
		{[]string{"acme-*"}, []string{"acme-?"}, false},
	} {
		err := app.RepoPatternsWithin(c.ceiling, c.patterns)
		if (err == nil) != c.ok {
			t.Errorf("RepoPatternsWithin(%q, %q) = %v, want ok=%v", c.ceiling, c.patterns, err, c.ok)
		}
		if err != nil && chartctl.ErrorCode(err) != chartctl.EFORBIDDEN {
			t.Errorf("RepoPatternsWithin(%q, %q): code %s, want forbidden", c.ceiling, c.patterns, chartctl.ErrorCode(err))
		}
	}
}

func TestParseRepoRole(t *testing.T) {
	for _, s := range []string{"read", "write", "maintain", "admin"} {
		if r, err := app.ParseRepoRole(s); err != nil || string(r) != s {
			t.Errorf("ParseRepoRole(%q) = %q, %v", s, r, err)
		}
	}
	for _, s := range []string{"", "owner", "member", "Admin", " read"} {
		if _, err := app.ParseRepoRole(s); chartctl.ErrorCode(err) != chartctl.EINVALID {
			t.Errorf("ParseRepoRole(%q): %v, want invalid", s, err)
		}
	}
}
