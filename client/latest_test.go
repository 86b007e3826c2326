package client

import "testing"

func TestLatest(t *testing.T) {
	for _, c := range []struct {
		versions []string
		devel    bool
		want     string
		ok       bool
	}{
		{[]string{"1.0.0", "2.0.0-rc.1", "1.1.0"}, false, "1.1.0", true},
		{[]string{"1.0.0", "2.0.0-rc.1", "1.1.0"}, true, "2.0.0-rc.1", true},
		{[]string{"2.0.0-rc.1", "2.0.0-beta.2"}, false, "", false},
		{[]string{"2.0.0-rc.1", "2.0.0-beta.2"}, true, "2.0.0-rc.1", true},
		{[]string{"v1.2.0", "1.10.0", "not-semver"}, false, "1.10.0", true},
		{[]string{"not-semver"}, true, "", false},
		{nil, true, "", false},
		{[]string{"1.0.0+build.7", "0.9.0"}, false, "1.0.0+build.7", true},
	} {
		got, ok := Latest(c.versions, c.devel)
		if got != c.want || ok != c.ok {
			t.Errorf("Latest(%v, devel %v) = %q %v, want %q %v", c.versions, c.devel, got, ok, c.want, c.ok)
		}
	}
}

func TestSameVersion(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"v1.0.0", "1.0.0", true},
		{"1.0", "1.0.0", true},
		{"1.0.0+build.1", "1.0.0", true},
		{"1.0.0-rc.1", "1.0.0", false},
		{"latest", "latest", true},
		{"latest", "1.0.0", false},
	} {
		if got := SameVersion(c.a, c.b); got != c.want {
			t.Errorf("SameVersion(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
