package build

import (
	"runtime/debug"
	"testing"
)

// `go install github.com/chartctl/chartctl/cmd/chartctl@v1.4.0` (as
// docs/install.md offers) links no -X flags: `chartctl version` said "dev
// (commit none, built unknown)". What the toolchain recorded is used.
func TestFromBuildInfo(t *testing.T) {
	installed := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/chartctl/chartctl", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abc"},
			{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"},
		},
	}
	v, c, d := fromBuildInfo(installed, "dev", "none", "unknown")
	if v != "1.4.0" || c != "0123abc" || d != "2026-11-20T10:00:00Z" {
		t.Errorf("go install: %q %q %q", v, c, d)
	}

	checkout := &debug.BuildInfo{
		Main:     debug.Module{Path: "github.com/chartctl/chartctl", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fed987"}, {Key: "vcs.modified", Value: "true"}},
	}
	v, c, d = fromBuildInfo(checkout, "dev", "none", "unknown")
	if v != "dev" || c != "fed987-dirty" || d != "unknown" {
		t.Errorf("go build in a modified checkout: %q %q %q", v, c, d)
	}

	// A release build's -X values win.
	v, c, d = fromBuildInfo(installed, "1.5.0", "abcdef", "2026-11-21T00:00:00Z")
	if v != "1.5.0" || c != "abcdef" || d != "2026-11-21T00:00:00Z" {
		t.Errorf("stamped: %q %q %q", v, c, d)
	}
}
