package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// column describes one column of a list screen.
type column struct {
	title string
	min   int // narrowest useful width
	max   int // widest the column grows to fit its content; 0: unlimited
	drop  int // when even minimum widths do not fit, higher drop first; 0: never dropped
}

const (
	colGap       = 2 // spaces between columns
	cursorMarker = "> "
)

// layoutColumns returns the width of every column for rows shown in width
// cells (the cursor marker excluded); a width of 0 hides the column. Each
// column starts at the width of its content, then the columns with the most
// slack shrink one cell at a time, and only when all are at their minimum
// are columns dropped.
func layoutColumns(cols []column, rows [][]string, width int) []int {
	w := make([]int, len(cols))
	for i, c := range cols {
		n := ansi.StringWidth(c.title)
		for _, r := range rows {
			if i < len(r) {
				n = max(n, ansi.StringWidth(r[i]))
			}
		}
		if c.max > 0 {
			n = min(n, c.max)
		}
		w[i] = max(n, c.min)
	}
	for {
		total, shown := 0, 0
		for _, x := range w {
			if x > 0 {
				total += x
				shown++
			}
		}
		total += colGap * max(shown-1, 0)
		over := total - width
		if over <= 0 {
			return w
		}
		// Shrink the column with the most room above its minimum.
		best, slack := -1, 0
		for i, x := range w {
			if x > 0 && x-cols[i].min > slack {
				best, slack = i, x-cols[i].min
			}
		}
		if best >= 0 {
			w[best] -= min(slack, over)
			continue
		}
		// Everything is at its minimum: drop the most droppable column.
		drop, prio := -1, 0
		for i, x := range w {
			if x > 0 && cols[i].drop > prio {
				drop, prio = i, cols[i].drop
			}
		}
		if drop < 0 {
			// Nothing left to drop; the line is cut at the window edge.
			return w
		}
		w[drop] = 0
	}
}

// renderCells joins cells into one line using the given widths, each cell
// cut with an ellipsis or padded to its width.
func renderCells(cells []string, widths []int) string {
	var b strings.Builder
	first := true
	for i, wd := range widths {
		if wd <= 0 {
			continue
		}
		if !first {
			b.WriteString(strings.Repeat(" ", colGap))
		}
		first = false
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		b.WriteString(fit(cell, wd))
	}
	return b.String()
}

// fit cuts s to w cells with an ellipsis, or pads it with spaces to w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// clip cuts s to at most w cells with an ellipsis and never pads.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}
