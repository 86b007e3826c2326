// Package text lays out text for people: display widths, truncation and
// tables for a terminal (every cell goes through termtext.Line, so server
// text cannot drive the terminal), and sizes in bytes for every surface
// (API messages, the CLI, the web pages).
package text

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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

// ExactBytes formats n bytes in the largest binary unit that divides it,
// so that ParseBytes reads back the same value: "16KiB", "64MiB", and the
// bare number ("1000") when no unit divides it.
func ExactBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
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

// byteUnits are the suffixes ParseBytes reads, longest first so "GiB"
// is not read as "B". Bare K, M, G and T are binary, as in Helm's and
// Kubernetes' habits of writing sizes in flags.
var byteUnits = []struct {
	suffix string
	size   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseBytes reads a size in bytes as people write it: "1048576",
// "512KiB", "10 GiB", "1.5GiB", "2GB" (decimal), "10G" (binary); case does
// not matter. The result is a whole number of bytes, 0 or more.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.size
			break
		}
	}
	bad := fmt.Errorf("invalid size %q: use a number of bytes or a size such as 512MiB, 10GiB or 2GB", s)
	if t == "" || strings.Trim(t, "0123456789.") != "" || strings.Count(t, ".") > 1 || t == "." {
		return 0, bad
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n > (1<<62)/mult {
			return 0, bad
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) >= 1<<62 {
		return 0, bad
	}
	v := f * float64(mult)
	if v != float64(int64(v)) {
		return 0, fmt.Errorf("invalid size %q: it is not a whole number of bytes", s)
	}
	return int64(v), nil
}

// ParseDuration reads a duration as people write it: a Go duration
// ("90s", "12h", "1h30m") or a whole number of days ("30d", up to 100
// years), 0 or more.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	bad := fmt.Errorf("invalid duration %q: use e.g. 90s, 12h or 30d", s)
	if n, ok := strings.CutSuffix(t, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 36500 {
			return 0, bad
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
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

// Count writes n things for a person, with one or many as the number
// asks: Count(1, "blob", "blobs") is "1 blob", Count(3, …) "3 blobs".
func Count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
