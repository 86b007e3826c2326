package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
)

var tabNames = [tabCount]string{"Charts", "Teams"}

// View renders the whole window: header with the tabs, breadcrumb, body,
// status line and footer. Every line is cut to the window's width and the
// result has exactly as many lines as the window is tall.
func (m Model) View() string {
	w, h := max(m.c.width, 1), max(m.c.height, 1)
	bodyH := m.bodyHeight()
	lines := make([]string, 0, bodyH+chromeRows)
	lines = append(lines, m.headerView(w), m.crumbView(w))

	var body []string
	s := m.current()
	switch {
	case m.showHelp:
		body = m.helpLines(w)
	case s.isList():
		body = m.listLines(s, w)
	default:
		body = m.pageLines(s, w)
		start := min(s.scroll, max(len(body)-bodyH, 0))
		body = body[start:]
	}
	for i := 0; i < bodyH; i++ {
		if i < len(body) {
			lines = append(lines, body[i])
		} else {
			lines = append(lines, "")
		}
	}
	lines = append(lines, m.statusView(w), m.footerView(w))
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = clip(l, w)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) headerView(w int) string {
	st := m.c.styles
	parts := []string{st.brand.Render("chartctl")}
	for i, name := range tabNames {
		if i == m.tab {
			parts = append(parts, st.tabActive.Render("["+name+"]"))
		} else {
			parts = append(parts, st.tabIdle.Render(" "+name+" "))
		}
	}
	return clip(" "+strings.Join(parts, " "), w)
}

// crumbView shows where the user is; when too long, its start is cut so
// the current screen stays readable.
func (m *Model) crumbView(w int) string {
	st := m.stacks[m.tab]
	titles := make([]string, len(st))
	for i, s := range st {
		titles[i] = s.title
	}
	c := " " + strings.Join(titles, " › ")
	if n := ansi.StringWidth(c); n > w {
		c = ansi.TruncateLeft(c, n-w+1, "…")
	}
	return m.c.styles.crumb.Render(c)
}

func (m *Model) listLines(s *screen, w int) []string {
	st := m.c.styles
	var lines []string
	if s.filterShown() {
		lines = append(lines, m.filterLine(s, w))
	}
	switch {
	case !s.loaded && s.loading:
		return append(lines, " "+m.spinner.View()+" Loading "+s.kind.String()+"…")
	case !s.loaded:
		return append(lines, st.dim.Render(" Could not load "+s.kind.String()+". Press r to try again."))
	case len(s.visible) == 0 && len(s.rows) == 0:
		return append(lines, st.dim.Render(" No "+s.kind.String()+"."))
	case len(s.visible) == 0:
		msg := " Nothing loaded matches “" + termtext.Line(s.filter.Value()) + "”."
		if s.kind == viewRepos && s.filtering {
			msg += " Enter searches charts on the server."
		}
		return append(lines, st.dim.Render(msg))
	}

	cols := s.kind.columns()
	cells := make([][]string, len(s.visible))
	for i, ri := range s.visible {
		cells[i] = s.rows[ri].cells
	}
	markerW := len(cursorMarker)
	widths := layoutColumns(cols, cells, w-markerW)
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	lines = append(lines, st.colHeader.Render(strings.Repeat(" ", markerW)+renderCells(titles, widths)))
	end := min(s.offset+m.listHeight(s), len(s.visible))
	for i := s.offset; i < end; i++ {
		line := renderCells(cells[i], widths)
		if i == s.cursor {
			lines = append(lines, st.selected.Render(clip(cursorMarker+line, w)))
		} else if s.mark != "" && s.rows[s.visible[i]].key == s.mark {
			// The version the diff key compares with; the status line
			// names it too.
			lines = append(lines, fit("*", markerW)+line)
		} else {
			lines = append(lines, strings.Repeat(" ", markerW)+line)
		}
	}
	return lines
}

func (m *Model) filterLine(s *screen, w int) string {
	st := m.c.styles
	if !s.filtering {
		return clip(st.filter.Render(" /"+termtext.Line(s.filter.Value()))+st.dim.Render("  esc clears"), w)
	}
	hint := filterHint(s)
	ti := s.filter
	ti.Width = filterInputWidth(s, w)
	return clip(" "+ti.View()+st.dim.Render(hint), w)
}

// filterHint says what enter and esc do in the filter input.
func filterHint(s *screen) string {
	if s.kind == viewRepos {
		return "  enter searches the server · esc clears"
	}
	return "  enter keeps · esc clears"
}

// filterInputWidth is the width of the filter's text in a window w wide.
func filterInputWidth(s *screen, w int) int {
	return max(w-ansi.StringWidth(filterHint(s))-4, 8)
}

// statusLine shows the last error, or where the cursor is, and the spinner
// while requests are in flight.
func (m *Model) statusView(w int) string {
	st := m.c.styles
	right := ""
	if m.inflight > 0 {
		right = m.spinner.View() + " loading"
	}
	left := ""
	s := m.current()
	switch {
	case m.status != "":
		left = st.statusErr.Render(" ! " + m.status)
	case !s.isList() && !m.showHelp:
		// Say when the detail goes on below or above the window; the
		// install lines come last and are easy to miss.
		total, bodyH := len(m.pageLines(s, max(m.c.width, 1))), m.bodyHeight()
		if total > bodyH {
			first := min(s.scroll, total-bodyH)
			left = st.dim.Render(fmt.Sprintf(" lines %d–%d of %d · ↑↓ scroll", first+1, first+bodyH, total))
		}
	case s.isList() && s.loaded && len(s.visible) > 0:
		more := ""
		if !s.done {
			more = "+"
		}
		left = st.dim.Render(fmt.Sprintf(" %d/%d%s %s", s.cursor+1, len(s.visible), more, s.kind))
		if s.filter.Value() != "" {
			left += st.dim.Render(fmt.Sprintf(" (filtered from %d)", len(s.rows)))
		}
		if s.mark != "" {
			left += st.dim.Render(" · marked " + termtext.Line(s.mark) + ": d diffs against it")
		}
	}
	return joinEnds(left, right, w)
}

// footerView shows the server, the rate-limit budget and a key reminder.
func (m *Model) footerView(w int) string {
	st := m.c.styles
	server := m.c.opts.Server
	if server == "" {
		server = "(no server)"
	}
	left := " " + termtext.Line(server)
	if m.rate.ok {
		left += fmt.Sprintf(" · rate %d/%d", m.rate.remaining, m.rate.limit)
	}
	// The server and budget come first; key reminders take what is left,
	// keeping room for at least "? help".
	left = clip(left, max(w-10, 0))
	return joinEnds(st.dim.Render(left), m.shortHelp(w-ansi.StringWidth(left)-2), w)
}

// shortHelp lists as many key reminders as fit in w cells.
func (m *Model) shortHelp(w int) string {
	st := m.c.styles
	var b strings.Builder
	used := 0
	list := m.current().isList() && !m.showHelp
	for _, k := range m.c.keys.ShortHelp() {
		if !list && (k.Help() == m.c.keys.Open.Help() || k.Help() == m.c.keys.Filter.Help()) {
			continue // nothing to open or filter on a detail or the help
		}
		if k.Help() == m.c.keys.Access.Help() && (!list || !m.current().hasAccessToggle()) {
			continue // only a repository's screens toggle its access list
		}
		if (k.Help() == m.c.keys.Diff.Help() || k.Help() == m.c.keys.Mark.Help()) && (!list || m.current().kind != viewVersions) {
			continue // only a chart's versions are diffed
		}
		item := k.Help().Key + " " + k.Help().Desc
		n := ansi.StringWidth(item)
		if used > 0 {
			n += 3 // " · "
		}
		if used+n > w {
			break
		}
		if used > 0 {
			b.WriteString(st.dim.Render(" · "))
		}
		b.WriteString(st.code.Render(k.Help().Key) + " " + st.dim.Render(k.Help().Desc))
		used += n
	}
	return b.String()
}

// joinEnds puts left and right on one line w cells wide, cutting left when
// both do not fit.
func joinEnds(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w {
		return clip(right, w)
	}
	left = clip(left, max(w-rw-1, 0))
	gap := w - ansi.StringWidth(left) - rw
	return left + strings.Repeat(" ", max(gap, 1)) + right
}

func (m *Model) helpLines(w int) []string {
	st := m.c.styles
	groups := m.c.keys.FullHelp()
	cols := make([]string, len(groups))
	for i, g := range groups {
		var b strings.Builder
		for j, k := range g {
			if j > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("  " + st.code.Render(fit(k.Help().Key, 8)) + " " + k.Help().Desc)
		}
		cols[i] = b.String()
	}
	var body string
	if wide := lipgloss.JoinHorizontal(lipgloss.Top, cols[0], "    ", cols[1]); lipgloss.Width(wide) <= w {
		body = wide
	} else {
		body = cols[0] + "\n" + cols[1]
	}
	lines := []string{st.title.Render(" Keys"), ""}
	lines = append(lines, strings.Split(body, "\n")...)
	return append(lines, "", st.dim.Render(" ? or esc closes this help"))
}

// detailLines lays out one chart version.
func (m *Model) detailLines(s *screen, w int) []string {
	st := m.c.styles
	c := s.detail
	name, version := termtext.Line(s.chart), termtext.Line(s.version)
	lines := []string{" " + st.title.Render(name+" "+version), ""}

	const labelW = 13
	valueW := max(w-labelW-2, 10)
	// fields shows one value per line under a label, each wrapped to the
	// window; no value shows a dash.
	fields := func(label string, values ...string) {
		if len(values) == 0 {
			values = []string{""}
		}
		first := true
		for _, value := range values {
			if value == "" {
				value = "–"
			}
			for _, part := range strings.Split(ansi.Wrap(termtext.Line(value), valueW, " ,"), "\n") {
				lbl := strings.Repeat(" ", labelW)
				if first {
					lbl = st.label.Render(fit(label, labelW))
					first = false
				}
				lines = append(lines, " "+lbl+" "+part)
			}
		}
	}
	field := func(label, value string) { fields(label, value) }
	field("Repository", s.repo)
	field("Chart", s.chart)
	field("Version", c.Version)
	field("App version", c.AppVersion)
	field("Digest", c.Digest)
	field("Size", formatSize(c.Size))
	field("Downloads", strconv.FormatInt(c.Downloads, 10))
	field("Created", formatTime(c.CreatedAt))
	field("Keywords", strings.Join(c.Keywords, ", "))
	field("Description", c.Description)
	// Home, sources and maintainers come with the version's own metadata,
	// so they show once it has loaded.
	if s.loaded {
		field("Home", c.Home)
		fields("Sources", c.Sources...)
		fields("Maintainers", maintainerLines(c.Maintainers)...)
	}
	// The verdicts, as chart view shows them: the signature and the
	// admission policy's findings.
	if c.Verification != nil {
		field("Signature", c.Verification.Summary())
	}
	if c.Policy != nil {
		field("Policy", c.Policy.Summary())
		findings := make([]string, 0, len(c.Policy.Findings))
		for _, f := range c.Policy.Findings {
			findings = append(findings, f.Severity+" "+f.Rule+": "+f.Message)
		}
		if len(findings) > 0 {
			fields("Findings", findings...)
		}
	}

	lines = append(lines, "", " "+st.title.Render("Install"))
	server := strings.TrimRight(m.c.opts.Server, "/")
	if server == "" {
		server = "<server>"
	}
	l := client.Install(termtext.Line(server), termtext.Line(s.repo), name, version, s.private)
	cmds := []string{l.RepoAdd, l.Install}
	if l.RegistryLogin != "" {
		cmds = append(cmds, l.RegistryLogin)
	}
	if l.OCIInstall != "" {
		cmds = append(cmds, l.OCIInstall)
	}
	for _, cmd := range cmds {
		// Commands are hard-wrapped rather than cut so they stay complete:
		// to the width left beside the deeper indent of the continuation
		// lines, so no piece reaches the window's edge and is clipped.
		for i, part := range strings.Split(ansi.Hardwrap(cmd, max(w-6, 10), true), "\n") {
			indent := "   "
			if i > 0 {
				indent = "     "
			}
			lines = append(lines, indent+st.code.Render(part))
		}
	}
	if s.private {
		note := "KEY: an API key with repo:read, from chartctl api-key create --name helm --scopes repo:read"
		for _, part := range strings.Split(ansi.Wrap(note, max(w-4, 10), " "), "\n") {
			lines = append(lines, "   "+st.dim.Render(part))
		}
	}
	return lines
}

// detailScrollMax is the largest useful scroll offset of a detail screen.
func (m *Model) detailScrollMax(s *screen) int {
	return max(len(m.pageLines(s, max(m.c.width, 1)))-m.bodyHeight(), 0)
}

// maintainerLines shows each maintainer as "Name <email> url", leaving out
// what Chart.yaml does not give.
func maintainerLines(ms []client.Maintainer) []string {
	out := make([]string, 0, len(ms))
	for _, mt := range ms {
		parts := make([]string, 0, 3)
		if mt.Name != "" {
			parts = append(parts, mt.Name)
		}
		if mt.Email != "" {
			parts = append(parts, "<"+mt.Email+">")
		}
		if mt.URL != "" {
			parts = append(parts, mt.URL)
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, " "))
		}
	}
	return out
}

// pageLines lays out a screen that scrolls as a page: a version's detail
// or a values diff.
func (m *Model) pageLines(s *screen, w int) []string {
	if s.kind == viewDiff {
		return m.diffLines(s, w)
	}
	return m.detailLines(s, w)
}
