// Package text lays out text for people: display widths, truncation and
// tables for a terminal (every cell goes through termtext.Line, so server
// text cannot drive the terminal), and sizes in bytes for every surface
// (API messages, the CLI, the web pages).
package text

import (
	"fmt"
	"strings"

	"github.com/mattn/go-runewidth"
)

// DisplayWidth returns how many terminal columns s takes.
func DisplayWidth(s string) int {
	return runewidth.StringWidth(s)
}

// Truncate shortens s to at most width columns, ending it with "..." when
// it had to cut. A width under 4 cuts without the ellipsis.
func Truncate(width int, s string) string {
	if width <= 0 {
		return ""
	}
	if runewidth.StringWidth(s) <= width {
		return s
	}
	if width < 4 {
		return runewidth.Truncate(s, width, "")
	}
	return runewidth.Truncate(s, width, "...")
}

// HumanBytes formats n bytes with binary units, one decimal where it
// counts: "512 B", "1.5 KiB", "10 MiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/float64(div)), ".0")
	return v + " " + string("KMGTPE"[exp]) + "iB"
}

// Usage describes storage used against a quota, in words: "1.2 MiB of
// 10 MiB, 3 of 50 versions"; a nil limit is unlimited ("5 KiB, 1 version").
func Usage(usedBytes int64, maxBytes *int64, usedVersions int64, maxVersions *int64) string {
	bytes := HumanBytes(usedBytes)
	if maxBytes != nil {
		bytes += " of " + HumanBytes(*maxBytes)
	}
	unit := "versions"
	if usedVersions == 1 && maxVersions == nil {
		unit = "version"
	}
	versions := fmt.Sprintf("%d %s", usedVersions, unit)
	if maxVersions != nil {
		versions = fmt.Sprintf("%d of %d %s", usedVersions, *maxVersions, unit)
	}
	return bytes + ", " + versions
}
