package tui

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
)

// valuesFile is the file whose diff the values diff shows as text.
const valuesFile = "values.yaml"

// diffLines lays out the values diff of two versions: the keys added,
// removed and whose default changed, then values.yaml's text diff, then
// the other files that differ (by name: `chartctl chart diff` shows them).
// Every line starts with a character saying what it is (+ - ~ @), so it
// reads the same without colour.
func (m *Model) diffLines(s *screen, w int) []string {
	st := m.c.styles
	name := termtext.Line(s.chart)
	lines := []string{" " + st.title.Render(name+" "+termtext.Line(s.from)+" → "+termtext.Line(s.version)) + st.dim.Render("  values.yaml"), ""}
	if !s.loaded {
		if s.loading {
			return append(lines, " "+m.spinner.View()+" Comparing…")
		}
		return append(lines, st.dim.Render(" Could not load the diff. Press r to try again."))
	}
	d := s.diff
	// wrapped adds text cut into lines of the window's width, each after
	// prefix (the first) or as many spaces (the others).
	wrapped := func(prefix string, text string, render func(...string) string) {
		pad := strings.Repeat(" ", ansi.StringWidth(prefix))
		for i, part := range strings.Split(ansi.Hardwrap(text, max(w-ansi.StringWidth(prefix)-1, 10), true), "\n") {
			p := pad
			if i == 0 {
				p = prefix
			}
			lines = append(lines, render(p+part))
		}
	}
	section := func(title string, n int) {
		lines = append(lines, " "+st.title.Render(title+" ("+strconv.Itoa(n)+")"))
	}
	v := d.Values
	if d.ValuesError != "" {
		wrapped(" ! ", "values.yaml is not compared by key: "+termtext.Line(d.ValuesError), st.statusErr.Render)
		lines = append(lines, "")
	} else if len(v.Added)+len(v.Removed)+len(v.Changed) == 0 {
		lines = append(lines, st.dim.Render(" No values were added, removed or changed."), "")
	}
	if len(v.Added) > 0 {
		section("Added", len(v.Added))
		for _, k := range v.Added {
			wrapped("   + ", termtext.Line(k), st.added.Render)
		}
		lines = append(lines, "")
	}
	if len(v.Removed) > 0 {
		section("Removed", len(v.Removed))
		for _, k := range v.Removed {
			wrapped("   - ", termtext.Line(k), st.removed.Render)
		}
		lines = append(lines, "")
	}
	if len(v.Changed) > 0 {
		section("Changed defaults", len(v.Changed))
		for _, c := range v.Changed {
			wrapped("   ~ ", termtext.Line(c.Key)+": "+showValue(c.From)+" → "+showValue(c.To), st.changed.Render)
		}
		lines = append(lines, "")
	}

	var values *client.FileDiff
	var others []client.FileDiff
	for i, f := range d.Files {
		if f.Path == valuesFile {
			values = &d.Files[i]
		} else {
			others = append(others, f)
		}
	}
	if values == nil {
		lines = append(lines, st.dim.Render(" values.yaml is the same in both versions."))
	} else {
		lines = append(lines, " "+st.title.Render("values.yaml")+st.dim.Render(" ("+values.Status+")"))
		for _, l := range strings.Split(strings.TrimRight(values.Diff, "\n"), "\n") {
			l = termtext.Line(l)
			render := st.dim.Render
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				render = st.label.Render
			case strings.HasPrefix(l, "+"):
				render = st.added.Render
			case strings.HasPrefix(l, "-"):
				render = st.removed.Render
			case strings.HasPrefix(l, "@@"):
				render = st.hunk.Render
			case strings.HasPrefix(l, " "):
				render = func(s ...string) string { return strings.Join(s, "") }
			}
			wrapped("   ", l, render)
		}
	}
	if len(others) > 0 {
		lines = append(lines, "")
		section("Other files that differ", len(others))
		for _, f := range others {
			wrapped("   ", fit(f.Status, 9)+" "+termtext.Line(f.Path), st.dim.Render)
		}
		wrapped("   ", "chartctl chart diff "+name+" "+termtext.Line(s.from)+" "+termtext.Line(s.version)+" --repo "+termtext.Line(s.repo)+" shows them", st.code.Render)
	}
	return lines
}

// showValue shows a default as JSON (strings quoted, maps and lists on
// one line), "(null)" for none.
func showValue(v any) string {
	if v == nil {
		return "(null)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Values come from YAML and always marshal; this is a guard.
		return termtext.Line(fmt.Sprint(v))
	}
	return termtext.Line(string(b))
}
