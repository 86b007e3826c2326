package chart

import (
	"errors"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/chartctl/chartctl/internal/chartctl"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"mychart", "my-chart", "nginx-ingress", "a", "My.Chart_2", "0x"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", `a\b`, "-x", ".x", "_x", "a b", "ä", "a\x00", string(make([]byte, 251))} {
		err := ValidateName(bad)
		var ce *chartctl.Error
		if !errors.As(err, &ce) || ce.Code != chartctl.EINVALID || ce.Parameter != "name" {
			t.Errorf("ValidateName(%q) = %v, want EINVALID naming name", bad, err)
		}
	}
}

func TestValidateVersion(t *testing.T) {
	for _, ok := range []string{"1.2.3", "1.2.3-rc.1", "1.2.3+build.5", "v1.2.3", "1.2", "1", "0.0.0-0", "01.2.3"} {
		if err := ValidateVersion(ok); err != nil {
			t.Errorf("ValidateVersion(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "latest", "1.2.3.4", "1.2.3-", "1.2.3/x", "../1.0.0", "1.0.0 ", "^1.0.0"} {
		err := ValidateVersion(bad)
		var ce *chartctl.Error
		if !errors.As(err, &ce) || ce.Code != chartctl.EINVALID || ce.Parameter != "version" {
			t.Errorf("ValidateVersion(%q) = %v, want EINVALID naming version", bad, err)
		}
	}
	if err := ValidateVersion("1.0.0"); err != nil {
		t.Fatal(err)
	}
	want := `Invalid chart version "latest": not a valid semantic version (such as 1.2.3 or 1.2.3-rc.1).`
	if msg := chartctl.ErrorMessage(ValidateVersion("latest")); msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
}

func TestParseArchiveFileName(t *testing.T) {
	cases := []struct {
		file, name, version string
		ok                  bool
	}{
		{"mychart-1.2.3.tgz", "mychart", "1.2.3", true},
		{"mychart-1.2.3-rc.1.tgz", "mychart", "1.2.3-rc.1", true},
		{"my-long-chart-0.1.0+build.1.tgz", "my-long-chart", "0.1.0+build.1", true},
		{"app-2-1.0.0.tgz", "app-2", "1.0.0", true},
		{"mychart-1.2.3-1.tgz", "mychart", "1.2.3-1", true},
		{"mychart-v1.2.tgz", "mychart", "v1.2", true},
		{"mychart.tgz", "", "", false},
		{"mychart-1.2.3.tar.gz", "", "", false},
		{"mychart-1.2.3.tgz.prov", "", "", false},
		{"-1.2.3.tgz", "", "", false},
		{"../x-1.2.3.tgz", "", "", false},
		{"mychart-.tgz", "", "", false},
	}
	for _, tc := range cases {
		name, version, ok := ParseArchiveFileName(tc.file)
		if name != tc.name || version != tc.version || ok != tc.ok {
			t.Errorf("ParseArchiveFileName(%q) = %q, %q, %v; want %q, %q, %v", tc.file, name, version, ok, tc.name, tc.version, tc.ok)
		}
		if ok && ArchiveFileName(name, version) != tc.file {
			t.Errorf("ArchiveFileName(%q, %q) = %q", name, version, ArchiveFileName(name, version))
		}
	}
	got := ArchiveFileCandidates("app-2-1.0.0.tgz")
	want := []NameVersion{{"app-2", "1.0.0"}, {"app", "2-1.0.0"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("candidates = %v, want %v", got, want)
	}
}

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"mychart", "..", "a/b", "-x", "My.Chart_2", "ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateName(s) != nil {
			return
		}
		// A valid name is a safe path segment and reads back from its
		// archive file name.
		for _, c := range []byte(s) {
			if c == '/' || c == '\\' || c < 0x21 || c > 0x7e {
				t.Fatalf("valid name %q has byte %q", s, c)
			}
		}
		if s == "." || s == ".." || s[0] == '-' {
			t.Fatalf("valid name %q", s)
		}
		found := false
		for _, nv := range ArchiveFileCandidates(ArchiveFileName(s, "1.0.0")) {
			found = found || nv == NameVersion{s, "1.0.0"}
		}
		if !found {
			t.Fatalf("%q-1.0.0.tgz does not parse back", s)
		}
	})
}

func FuzzValidateVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "v1.2", "1.2.3-rc.1+b", "01.2.3", "latest", "1.2.3/../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateVersion(s)
		_, herr := semver.NewVersion(s)
		if err == nil && herr != nil {
			t.Fatalf("accepted %q, which Helm's SemVer parser rejects", s)
		}
		if err != nil && herr == nil && len(s) <= MaxVersionLength {
			t.Fatalf("rejected %q, which Helm accepts: %v", s, err)
		}
		if err == nil {
			for _, c := range []byte(s) {
				if c == '/' || c == '\\' || c < 0x21 || c > 0x7e {
					t.Fatalf("valid version %q has byte %q", s, c)
				}
			}
		}
	})
}

func FuzzParseArchiveFileName(f *testing.F) {
	for _, s := range []string{"mychart-1.2.3.tgz", "a-1-2-3.tgz", "app-2-1.0.0.tgz", "x.tgz", "-.tgz", "a--1.0.0.tgz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, version, ok := ParseArchiveFileName(s)
		if !ok {
			if len(ArchiveFileCandidates(s)) != 0 {
				t.Fatal("candidates but not ok")
			}
			return
		}
		if ValidateName(name) != nil || ValidateVersion(version) != nil {
			t.Fatalf("%q parsed to invalid %q, %q", s, name, version)
		}
		if ArchiveFileName(name, version) != s {
			t.Fatalf("%q parsed to %q, %q, which do not rebuild it", s, name, version)
		}
	})
}
