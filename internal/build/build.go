// Package build holds the version information stamped into the binary with
// -ldflags "-X github.com/chartctl/chartctl/internal/build.Version=…".
package build

// Stamped at link time; the defaults describe a development build.
var (
	// Version is the release version, such as "1.2.0".
	Version = "dev"
	// Commit is the git commit the binary was built from.
	Commit = "none"
	// Date is the build date in RFC 3339.
	Date = "unknown"
)
