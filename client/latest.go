package client

import "github.com/Masterminds/semver/v3"

// Prerelease reports whether version is a SemVer pre-release ("2.0.0-rc.1",
// "v1.0.0-beta"), which Helm installs only when asked (--devel). A version
// that is not SemVer is not a pre-release.
func Prerelease(version string) bool {
	v, err := semver.NewVersion(version)
	return err == nil && v.Prerelease() != ""
}

// Latest returns the latest of a chart's versions: the highest SemVer
// version that is not a pre-release, as Helm chooses when no version is
// given (CONTRACT §18, decision 20); with devel, pre-releases count too,
// as with Helm's --devel. Build metadata takes no part in the order, and a
// version that is not SemVer is never the latest. ok is false when no
// version qualifies: none at all, or (without devel) only pre-releases.
//
// This is the one "latest" rule of chartctl: the CLI, the TUI and the
// dashboard all call it.
func Latest(versions []string, devel bool) (latest string, ok bool) {
	var best *semver.Version
	for _, s := range versions {
		v, err := semver.NewVersion(s)
		if err != nil || (!devel && v.Prerelease() != "") {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, latest = v, s
		}
	}
	return latest, best != nil
}

// SameVersion reports whether a and b name the same SemVer version
// ("v1.0.0" and "1.0.0"; build metadata aside, as SemVer orders them), or
// are equal strings when either is not SemVer. A repository holds at most
// one of a set of such versions.
func SameVersion(a, b string) bool {
	if a == b {
		return true
	}
	va, err := semver.NewVersion(a)
	if err != nil {
		return false
	}
	vb, err := semver.NewVersion(b)
	return err == nil && va.Equal(vb)
}
