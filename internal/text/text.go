// Package text lays out server-provided text for a terminal: display
// widths, truncation and tables. Every cell goes through termtext.Line, so
// server text cannot drive the terminal.
package text

import (
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
