// Package build holds the version information stamped into the binary with
// -ldflags "-X github.com/chartctl/chartctl/internal/build.Version=…".
// A binary built without those flags (`go install …/cmd/chartctl@v1.2.3`,
// `go build` in a checkout) takes what the Go toolchain recorded instead:
// the module version, the VCS revision and its time.
package build

import (
	"runtime/debug"
	"strings"
)

// Stamped at link time; the defaults describe a development build.
var (
	// Version is the release version, such as "1.2.0".
	Version = "dev"
	// Commit is the git commit the binary was built from.
	Commit = "none"
	// Date is the build date in RFC 3339.
	Date = "unknown"
)

func init() {
	if info, ok := debug.ReadBuildInfo(); ok {
		Version, Commit, Date = fromBuildInfo(info, Version, Commit, Date)
	}
}

// fromBuildInfo fills the values still at their defaults from info: the
// main module's version (without its "v"; "(devel)" is no version), and
// the vcs.revision and vcs.time settings (a "-dirty" suffix when
// vcs.modified). Stamped values win.
func fromBuildInfo(info *debug.BuildInfo, version, commit, date string) (string, string, string) {
	if version == "dev" {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = strings.TrimPrefix(v, "v")
		}
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if commit == "none" {
		if rev := settings["vcs.revision"]; rev != "" {
			commit = rev
			if settings["vcs.modified"] == "true" {
				commit += "-dirty"
			}
		}
	}
	if date == "unknown" {
		if t := settings["vcs.time"]; t != "" {
			date = t
		}
	}
	return version, commit, date
}
