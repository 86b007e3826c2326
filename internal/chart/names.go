package chart

import (
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// MaxNameLength and MaxVersionLength bound chart names and versions. Helm
// sets no bound; these leave room for every real chart while keeping
// NAME-VERSION.tgz a sane path segment.
const (
	MaxNameLength    = 250
	MaxVersionLength = 128
)

// validNameChars reports whether name follows the rule `helm create`
// applies to chart names (^[a-zA-Z0-9._-]+$), with a first character that
// is a letter or digit: Helm's loader only rejects ".", ".." and names with
// a path separator, but a chart name also becomes a URL path segment, a
// file name and a CLI argument here, where a leading dot or dash is a
// hazard. (A loop rather than a regular expression: every chart download
// checks a name.)
func validNameChars(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return name != ""
}

// ValidateName checks a chart name arriving in a request (a URL path, a
// query parameter). It returns EINVALID naming "name".
func ValidateName(name string) error {
	if msg := nameProblem(name); msg != "" {
		return chartctl.Invalid("name", "Invalid chart name %q: %s.", truncate(name), msg)
	}
	return nil
}

// ValidateVersion checks a chart version arriving in a request. A version
// is valid exactly when Helm parses it (Masterminds semver NewVersion, which
// accepts a leading "v" and a missing minor or patch number). It returns
// EINVALID naming "version".
func ValidateVersion(version string) error {
	if msg := versionProblem(version); msg != "" {
		return chartctl.Invalid("version", "Invalid chart version %q: %s.", truncate(version), msg)
	}
	return nil
}

// nameProblem says what is wrong with a chart name, "" if nothing.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "a name is required"
	case len(name) > MaxNameLength:
		return "longer than 250 characters"
	case !validNameChars(name):
		return "use letters, digits, '-', '_' and '.', starting with a letter or digit"
	}
	return ""
}

// versionProblem says what is wrong with a chart version, "" if nothing.
func versionProblem(version string) string {
	switch {
	case version == "":
		return "a version is required"
	case len(version) > MaxVersionLength:
		return "longer than 128 characters"
	}
	if _, err := semver.NewVersion(version); err != nil {
		return "not a valid semantic version (such as 1.2.3 or 1.2.3-rc.1)"
	}
	return ""
}

// truncate shortens a value quoted back in an error message.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// ArchiveFileName returns the file name Helm gives a packaged chart,
// NAME-VERSION.tgz; it is the last segment of the chart's URL in the index.
func ArchiveFileName(name, version string) string {
	return name + "-" + version + ".tgz"
}

// NameVersion is one reading of a chart archive file name.
type NameVersion struct {
	Name    string
	Version string
}

// ArchiveFileCandidates returns every way to read file (NAME-VERSION.tgz)
// as a valid chart name and version, most likely first. A name may contain
// dashes and a version may too (1.2.3-rc.1), and Helm's lenient SemVer
// accepts versions as short as "1", so "app-2-1.0.0.tgz" is both
// ("app", "2-1.0.0") and ("app-2", "1.0.0"). Readings whose version is
// strict SemVer (MAJOR.MINOR.PATCH) come first, then the remaining ones;
// within each group, shorter names first. A caller that can look the
// candidates up should serve the first one that exists.
func ArchiveFileCandidates(file string) []NameVersion {
	stem, ok := strings.CutSuffix(file, ".tgz")
	if !ok {
		return nil
	}
	var strict, lenient []NameVersion
	for i := 0; i < len(stem); i++ {
		if stem[i] != '-' {
			continue
		}
		name, version := stem[:i], stem[i+1:]
		if nameProblem(name) != "" || versionProblem(version) != "" {
			continue
		}
		nv := NameVersion{Name: name, Version: version}
		if _, err := semver.StrictNewVersion(version); err == nil {
			strict = append(strict, nv)
		} else {
			lenient = append(lenient, nv)
		}
	}
	return append(strict, lenient...)
}

// ParseArchiveFileName splits a Helm download file name such as
// "mychart-1.2.3-rc.1.tgz" into a chart name and version. When several
// readings are valid it returns the most likely one (see
// ArchiveFileCandidates, which callers able to check existence should
// prefer). ok is false when no reading is valid.
func ParseArchiveFileName(file string) (name, version string, ok bool) {
	c := ArchiveFileCandidates(file)
	if len(c) == 0 {
		return "", "", false
	}
	return c[0].Name, c[0].Version, true
}
