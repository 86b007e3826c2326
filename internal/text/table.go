package text

import (
	"fmt"
	"io"
	"strings"

	"github.com/chartctl/chartctl/client/termtext"
)

// Table prints rows of fields. On a terminal the columns are aligned and,
// when a width is known, columns marked Optional are left out, lowest
// priority first, until the rest fit without squashing any below
// minColumnWidth; then the widest column is truncated to fit (columns
// marked with KeepWhole, such as ids, never are). Elsewhere
// (a pipe, a file) every row is one line of tab-separated fields, easy to
// cut and awk. Every field is passed through SanitizeLine.
type Table struct {
	w      io.Writer
	tty    bool
	width  int
	header []string
	whole  map[int]bool
	// optional lists the columns that may be left out, first to go first.
	optional []int
	rows     [][]string
	current  []string
	curCol   []func(string) string
	// colorRows holds each row's per-field styles.
	colorRows [][]func(string) string
}

// NewTable returns a table writing to w. tty selects the aligned layout;
// width is the terminal width (0 for unlimited).
func NewTable(w io.Writer, tty bool, width int) *Table {
	return &Table{w: w, tty: tty, width: width}
}

// Header sets the column titles, printed only on a terminal.
func (t *Table) Header(cols ...string) {
	t.header = cols
}

// KeepWhole marks columns (counted from 0) that are never truncated to fit
// the terminal: ids and names a user copies into the next command.
func (t *Table) KeepWhole(cols ...int) {
	if t.whole == nil {
		t.whole = map[int]bool{}
	}
	for _, c := range cols {
		t.whole[c] = true
	}
}

// Optional marks columns (counted from 0) that a terminal too narrow for
// every column leaves out, the first given first: details such as times
// and request ids, so the columns a user reads (names, ids, outcomes)
// keep a readable width instead of every column shrinking to a few
// characters. Pipes and JSON output always have every column.
func (t *Table) Optional(cols ...int) {
	t.optional = append(t.optional, cols...)
}

// minColumnWidth is the narrowest a truncated column becomes before an
// optional column is left out to make room.
const minColumnWidth = 12

// AddField adds a field to the current row; color, when given, styles it
// on a terminal (it is applied after alignment, so escape sequences do not
// count towards the width).
func (t *Table) AddField(s string, color ...func(string) string) {
	t.current = append(t.current, termtext.Line(s))
	var c func(string) string
	if len(color) > 0 {
		c = color[0]
	}
	t.curCol = append(t.curCol, c)
}

// EndRow finishes the current row.
func (t *Table) EndRow() {
	t.rows = append(t.rows, t.current)
	t.colorRows = append(t.colorRows, t.curCol)
	t.current, t.curCol = nil, nil
}

// Render writes the table.
func (t *Table) Render() error {
	if len(t.current) > 0 {
		t.EndRow()
	}
	if !t.tty {
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(t.w, strings.Join(r, "\t")); err != nil {
				return fmt.Errorf("write table: %w", err)
			}
		}
		return nil
	}
	all := t.rows
	colors := t.colorRows
	if len(t.header) > 0 {
		h := make([]string, len(t.header))
		for i, c := range t.header {
			h[i] = strings.ToUpper(termtext.Line(c))
		}
		all = append([][]string{h}, all...)
		colors = append([][]func(string) string{nil}, colors...)
	}
	widths := columnWidths(all)
	cols := t.visible(widths)
	t.fit(widths, cols)
	for i, r := range all {
		var b strings.Builder
		for k, j := range cols {
			if j >= len(r) {
				break
			}
			f := Truncate(widths[j], r[j])
			last := k == len(cols)-1 || j == len(r)-1
			pad := ""
			if !last {
				pad = strings.Repeat(" ", widths[j]-DisplayWidth(f)+2)
			}
			if j < len(colors[i]) && colors[i][j] != nil {
				f = colors[i][j](f)
			}
			b.WriteString(f)
			b.WriteString(pad)
		}
		if _, err := fmt.Fprintln(t.w, strings.TrimRight(b.String(), " ")); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	return nil
}

// visible returns the columns to print, in order: all of them, less the
// optional ones that must go (first given first) for the others to fit
// the terminal with no truncatable column narrower than minColumnWidth.
func (t *Table) visible(widths []int) []int {
	dropped := map[int]bool{}
	need := func() int {
		n, shown := 0, 0
		for i, w := range widths {
			if dropped[i] {
				continue
			}
			if !t.whole[i] {
				w = min(w, minColumnWidth)
			}
			n += w
			shown++
		}
		return n + 2*(shown-1)
	}
	if t.width > 0 {
		for _, c := range t.optional {
			if need() <= t.width {
				break
			}
			if c < len(widths) {
				dropped[c] = true
			}
		}
	}
	cols := make([]int, 0, len(widths))
	for i := range widths {
		if !dropped[i] {
			cols = append(cols, i)
		}
	}
	return cols
}

// fit shrinks the widest of the columns cols until they fit the terminal
// width.
func (t *Table) fit(widths []int, cols []int) {
	if t.width <= 0 || len(cols) == 0 {
		return
	}
	total := func() int {
		n := 2 * (len(cols) - 1)
		for _, i := range cols {
			n += widths[i]
		}
		return n
	}
	for total() > t.width {
		widest := -1
		for _, i := range cols {
			if !t.whole[i] && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 || widths[widest] <= 8 {
			return
		}
		widths[widest]--
	}
}

func columnWidths(rows [][]string) []int {
	var widths []int
	for _, r := range rows {
		for j, f := range r {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			if w := DisplayWidth(f); w > widths[j] {
				widths[j] = w
			}
		}
	}
	return widths
}
