package tui

import (
	"context"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
)

// The two tabs.
const (
	tabCharts = iota
	tabTeams
	tabCount
)

// Layout constants: rows taken by the header, breadcrumb, status line and
// footer around the body, and the smallest height laid out (a shorter
// window shows the top of that layout).
const (
	chromeRows = 4
	minHeight  = 8
)

// common is what every part of the UI shares: the window size, styles,
// keys and options (gh-dash's ProgramContext).
type common struct {
	width, height int
	opts          Options
	styles        styles
	keys          keyMap
	now           func() time.Time // the clock; tests fix it
}

// Model is the browser's root bubbletea model. Create it with New.
type Model struct {
	api API
	ctx context.Context
	c   *common

	tab    int
	stacks [tabCount][]*screen
	nextID int

	spinner  spinner.Model
	spinning bool
	inflight int // requests sent and not yet answered

	showHelp bool
	status   string // the last error, shown until the next success
	rate     rateInfo
}

// New returns the browser's model for api. Run it with tea.NewProgram, or
// use Run. It starts loading the repositories when the program starts.
func New(api API, opts Options) Model {
	opts = opts.withDefaults()
	st := newStyles(opts.Output, opts.NoColor)
	m := Model{
		api: api,
		ctx: context.Background(),
		c: &common{
			width:  80,
			height: 24,
			opts:   opts,
			styles: st,
			keys:   newKeyMap(),
			now:    time.Now,
		},
		spinner: spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(st.spinner)),
	}
	m.stacks[tabCharts] = []*screen{m.newScreen(viewRepos, "Repositories")}
	m.stacks[tabTeams] = []*screen{m.newScreen(viewTeams, "Teams")}
	// Init sends this request.
	m.stacks[tabCharts][0].loading = true
	m.inflight = 1
	m.spinning = true
	return m
}

// Init sends the first request, which New already marked as in flight so
// the first frame shows the spinner.
func (m Model) Init() tea.Cmd {
	root := m.stacks[tabCharts][0]
	return tea.Batch(m.fetch(root, 1), m.spinner.Tick)
}

func (m *Model) newScreen(kind viewKind, title string) *screen {
	m.nextID++
	s := newScreen(m.nextID, kind, title)
	s.filter.Width = filterInputWidth(s, m.c.width)
	return s
}

// current returns the screen on top of the active tab.
func (m *Model) current() *screen {
	st := m.stacks[m.tab]
	return st[len(st)-1]
}

// findScreen returns the screen with id, if it is still on a stack.
func (m *Model) findScreen(id int) *screen {
	for _, st := range m.stacks {
		for _, s := range st {
			if s.id == id {
				return s
			}
		}
	}
	return nil
}

// bodyHeight is the number of rows between the breadcrumb and the status
// line.
func (m *Model) bodyHeight() int {
	return max(m.c.height, minHeight) - chromeRows
}

// listHeight is the number of item rows a list screen shows.
func (m *Model) listHeight(s *screen) int {
	h := m.bodyHeight() - 1 // column header
	if s.filterShown() {
		h--
	}
	return max(h, 1)
}

// load marks s as loading and returns the command that fetches page.
func (m *Model) load(s *screen, page int) tea.Cmd {
	s.loading = true
	m.inflight++
	cmds := []tea.Cmd{m.fetch(s, page)}
	if !m.spinning {
		m.spinning = true
		cmds = append(cmds, m.spinner.Tick)
	}
	return tea.Batch(cmds...)
}

// fetch returns the command that requests page of s.
func (m *Model) fetch(s *screen, page int) tea.Cmd {
	req := request{
		screenID: s.id, gen: s.gen, page: page, limit: m.c.opts.PageSize,
		kind: s.kind, repo: s.repo, chart: s.chart, version: s.version, team: s.team, query: s.query, from: s.from,
	}
	return fetch(m.ctx, m.api, m.c.opts.RequestTimeout, req)
}

// loadMore fetches the next page of s when the cursor is near the end of
// what is loaded and nothing is in flight for it. Errors stop automatic
// paging, so a rate limit is not hammered; refresh resumes it.
func (m *Model) loadMore(s *screen) tea.Cmd {
	if !s.isList() || s.loading || s.done || s.failed || !s.loaded {
		return nil
	}
	if !s.nearEnd(max(m.listHeight(s), 5)) {
		return nil
	}
	return m.load(s, s.page+1)
}

// refresh reloads s from its first page.
func (m *Model) refresh(s *screen) tea.Cmd {
	m.status = ""
	s.reset()
	return m.load(s, 1)
}

// push opens a new screen on the active tab and loads it.
func (m *Model) push(s *screen) tea.Cmd {
	m.stacks[m.tab] = append(m.stacks[m.tab], s)
	m.status = ""
	if !s.isList() {
		return m.load(s, 0)
	}
	return m.load(s, 1)
}

// back closes the top screen of the active tab.
func (m *Model) back() {
	if st := m.stacks[m.tab]; len(st) > 1 {
		m.stacks[m.tab] = st[:len(st)-1]
		m.status = ""
	}
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		for _, st := range m.stacks {
			for _, s := range st {
				s.filter.Width = filterInputWidth(s, msg.Width)
				s.scrollInto(m.listHeight(s))
			}
		}
		// A taller window may show the end of what is loaded.
		return m.loadMore(m.current())

	case spinner.TickMsg:
		if m.inflight == 0 {
			m.spinning = false
			return nil
		}
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return cmd

	case pageMsg:
		m.inflight--
		if msg.rate.ok {
			m.rate = msg.rate
		}
		s := m.findScreen(msg.screenID)
		if s == nil || msg.gen != s.gen {
			return nil // the screen was closed or refreshed meanwhile
		}
		s.loading = false
		if msg.err != nil {
			// A failed refresh leaves the rows it would have replaced.
			s.refill = nil
			s.failed = true
			m.status = describeError(msg.err, m.c.opts.Unauthorized, m.c.now())
			return nil
		}
		if s.refill != nil {
			s.refill.appendPage(msg)
			if !s.refillDone() {
				return m.load(s, s.refill.page+1)
			}
			s.swapRefill()
		} else {
			s.appendPage(msg)
		}
		s.loaded = true
		s.applyFilter()
		s.scrollInto(m.listHeight(s))
		m.status = ""
		if s == m.current() {
			return m.loadMore(s)
		}
		return nil

	case detailMsg:
		m.inflight--
		if msg.rate.ok {
			m.rate = msg.rate
		}
		s := m.findScreen(msg.screenID)
		if s == nil || msg.gen != s.gen {
			return nil
		}
		s.loading = false
		if msg.err != nil {
			s.failed = true
			m.status = describeError(msg.err, m.c.opts.Unauthorized, m.c.now())
			return nil
		}
		s.detail, s.diff = msg.chart, msg.diff
		s.loaded = true
		m.status = ""
		return nil

	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			// Keys typed faster than the terminal is read arrive as one
			// message ("/ngi"); each is a key of its own.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			}
			return tea.Batch(cmds...)
		}
		return m.handleKey(msg)
	}
	return nil
}

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	s := m.current()
	if s.filtering {
		return m.handleFilterKey(s, msg)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Quit):
			return tea.Quit
		case key.Matches(msg, k.Help), key.Matches(msg, k.Back):
			m.showHelp = false
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.Tab):
		m.tab = (m.tab + 1) % tabCount
		m.status = ""
		if cur := m.current(); !cur.loaded && !cur.loading {
			return m.load(cur, 1)
		}
		return nil
	case key.Matches(msg, k.Refresh):
		return m.refresh(s)
	case key.Matches(msg, k.Back):
		if s.isList() && s.filter.Value() != "" {
			s.filter.Reset()
			s.applyFilter()
			s.scrollInto(m.listHeight(s))
			return nil
		}
		m.back()
		return nil
	}
	if !s.isList() {
		return m.handleDetailKey(s, msg)
	}
	switch {
	case key.Matches(msg, k.Access) && s.hasAccessToggle():
		return m.toggleAccess(s)
	case key.Matches(msg, k.Mark) && s.kind == viewVersions:
		m.toggleMark(s)
		return nil
	case key.Matches(msg, k.Diff) && s.kind == viewVersions:
		return m.openDiff(s)
	case key.Matches(msg, k.Filter):
		s.filtering = true
		s.scrollInto(m.listHeight(s))
		return s.filter.Focus()
	case key.Matches(msg, k.Open):
		return m.open(s)
	}
	if m.moveCursor(s, msg) {
		return m.loadMore(s)
	}
	return nil
}

// moveCursor handles the movement keys of a list; it reports whether the
// key was one of them.
func (m *Model) moveCursor(s *screen, msg tea.KeyMsg) bool {
	k := m.c.keys
	h := m.listHeight(s)
	switch {
	case key.Matches(msg, k.Up):
		s.move(-1)
	case key.Matches(msg, k.Down):
		s.move(1)
	case key.Matches(msg, k.PageUp):
		s.move(-h)
	case key.Matches(msg, k.PageDown):
		s.move(h)
	case key.Matches(msg, k.Top):
		s.move(-len(s.visible))
	case key.Matches(msg, k.Bottom):
		s.move(len(s.visible))
	default:
		return false
	}
	s.scrollInto(h)
	return true
}

func (m *Model) handleFilterKey(s *screen, msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEsc:
		s.filtering = false
		s.filter.Blur()
		s.filter.Reset()
		s.applyFilter()
		s.scrollInto(m.listHeight(s))
		return nil
	case tea.KeyEnter:
		s.filtering = false
		s.filter.Blur()
		s.scrollInto(m.listHeight(s))
		q := strings.TrimSpace(s.filter.Value())
		if s.kind == viewRepos && q != "" {
			// Across repositories the user wants the server's search. The
			// repositories come back unfiltered when the search is closed.
			s.filter.Reset()
			s.applyFilter()
			s.scrollInto(m.listHeight(s))
			sr := m.newScreen(viewSearch, "Search “"+termtext.Line(q)+"”")
			sr.query = q
			return m.push(sr)
		}
		return nil
	case tea.KeyUp, tea.KeyDown, tea.KeyPgUp, tea.KeyPgDown:
		m.moveCursor(s, msg)
		return m.loadMore(s)
	}
	var cmd tea.Cmd
	s.filter, cmd = s.filter.Update(msg)
	s.applyFilter()
	s.scrollInto(m.listHeight(s))
	return tea.Batch(cmd, m.loadMore(s))
}

func (m *Model) handleDetailKey(s *screen, msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Up):
		s.scroll = max(s.scroll-1, 0)
	case key.Matches(msg, k.Down):
		s.scroll++
	case key.Matches(msg, k.PageUp):
		s.scroll = max(s.scroll-m.bodyHeight(), 0)
	case key.Matches(msg, k.PageDown):
		s.scroll += m.bodyHeight()
	case key.Matches(msg, k.Top):
		s.scroll = 0
	case key.Matches(msg, k.Bottom):
		s.scroll = m.detailScrollMax(s)
	}
	s.scroll = min(s.scroll, m.detailScrollMax(s))
	return nil
}

// open opens the item under the cursor.
func (m *Model) open(s *screen) tea.Cmd {
	r, ok := s.current()
	if !ok {
		return nil
	}
	var next *screen
	switch s.kind {
	case viewRepos:
		repo := r.item.(client.Repository)
		next = m.newScreen(viewCharts, r.cells[0])
		next.repo = repo.Name
		next.private = repo.Visibility != "public"
	case viewSearch:
		res := r.item.(client.SearchResult)
		next = m.newScreen(viewVersions, termtext.Line(res.Repository+"/"+res.Name))
		next.repo, next.chart = res.Repository, res.Name
		next.private = m.repoPrivate(res.Repository)
	case viewCharts:
		g := r.item.(chartGroup)
		next = m.newScreen(viewVersions, r.cells[0])
		next.repo, next.chart, next.private = s.repo, g.latest.Name, s.private
	case viewVersions:
		c := r.item.(client.Chart)
		next = m.newScreen(viewDetail, r.cells[0])
		next.repo, next.chart, next.version, next.private = s.repo, s.chart, c.Version, s.private
		// Show what the list knows while the full metadata loads.
		next.detail = c
	case viewTeams:
		t := r.item.(client.Team)
		next = m.newScreen(viewMembers, termtext.Line(t.Name))
		next.team = t.Name
	default:
		return nil
	}
	return m.push(next)
}

// toggleMark marks the version under the cursor of a versions list as
// the one to diff against, or clears the mark when it is on it already.
func (m *Model) toggleMark(s *screen) {
	r, ok := s.current()
	if !ok {
		return
	}
	v := r.item.(client.Chart).Version
	if s.mark == v {
		s.mark = ""
	} else {
		s.mark = v
	}
	m.status = ""
}

// openDiff opens the values diff of the version under the cursor of a
// versions list: against the marked version, or else against the one
// listed below it (the previous version, as the list is newest first).
func (m *Model) openDiff(s *screen) tea.Cmd {
	r, ok := s.current()
	if !ok {
		return nil
	}
	to := r.item.(client.Chart).Version
	from := s.mark
	if from == "" || from == to {
		if s.cursor+1 >= len(s.visible) {
			m.status = "No previous version of " + termtext.Line(s.chart) + " is listed: mark one with m, then press d on another."
			return nil
		}
		from = s.rows[s.visible[s.cursor+1]].item.(client.Chart).Version
	}
	next := m.newScreen(viewDiff, termtext.Line(from)+" → "+termtext.Line(to))
	next.repo, next.chart, next.version, next.from, next.private = s.repo, s.chart, to, from, s.private
	return m.push(next)
}

// toggleAccess opens the list of grants on the repository of the charts
// screen s, or closes it again when s is that list.
func (m *Model) toggleAccess(s *screen) tea.Cmd {
	if s.kind == viewAccess {
		m.back()
		return nil
	}
	next := m.newScreen(viewAccess, "access")
	next.repo, next.private = s.repo, s.private
	return m.push(next)
}

// repoPrivate reports whether the repositories list loaded so far shows
// repo as private; a search result carries no visibility of its own.
func (m *Model) repoPrivate(repo string) bool {
	for _, r := range m.stacks[tabCharts][0].rows {
		if rp, ok := r.item.(client.Repository); ok && rp.Name == repo {
			return rp.Visibility != "public"
		}
	}
	return false
}
