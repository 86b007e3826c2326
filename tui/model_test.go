package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/chartctl/chartctl/client"
)

// exec runs cmd and the commands it batches, returning the messages they
// produce except spinner ticks (which would start the spinner's timer
// loop). It is how these tests observe which requests a model sends.
func exec(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil, spinner.TickMsg:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, exec(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// step sends msg to m and returns the new model and the messages of the
// commands it returned.
func step(t *testing.T, m Model, msg tea.Msg) (Model, []tea.Msg) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), exec(cmd)
}

// settle sends msg and then feeds back every resulting message until the
// model sends no more requests.
func settle(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	queue := []tea.Msg{msg}
	for i := 0; len(queue) > 0; i++ {
		if i > 1000 {
			t.Fatal("model keeps sending requests")
		}
		var out []tea.Msg
		m, out = step(t, m, queue[0])
		queue = append(queue[1:], out...)
	}
	return m
}

func newTestModel(t *testing.T, api API, width, height int) Model {
	t.Helper()
	lipgloss.SetColorProfile(termenv.Ascii)
	m := New(api, Options{Server: testServer, PageSize: 50})
	m.c.now = func() time.Time { return fixedTime }
	m = settle(t, m, tea.WindowSizeMsg{Width: width, Height: height})
	for _, msg := range exec(m.Init()) {
		m = settle(t, m, msg)
	}
	return m
}

func manyRepos(n int) []client.Repository {
	repos := make([]client.Repository, n)
	for i := range repos {
		repos[i] = client.Repository{ID: fmt.Sprintf("repo_%03d", i), Name: fmt.Sprintf("repo-%03d", i), Visibility: "private", CreatedAt: fixedTime}
	}
	return repos
}

func down(t *testing.T, m Model) (Model, []tea.Msg) {
	t.Helper()
	return step(t, m, tea.KeyMsg{Type: tea.KeyDown})
}

func pageCalls(api *fakeAPI, method string) []string {
	var out []string
	for _, c := range api.callLog() {
		if strings.HasPrefix(c, method+":") {
			out = append(out, c)
		}
	}
	return out
}

func TestPagingLoadsNextPageNearTheEndOnce(t *testing.T) {
	api := newFakeAPI()
	api.repos = manyRepos(120)
	m := newTestModel(t, api, 100, 30)

	s := m.current()
	if len(s.rows) != 50 || s.done {
		t.Fatalf("after start: %d rows, done=%v; want 50 rows, more to come", len(s.rows), s.done)
	}
	if got := pageCalls(api, "ListRepositories"); !slices.Equal(got, []string{"ListRepositories::1"}) {
		t.Fatalf("calls after start = %v", got)
	}

	// Move down until the model asks for page 2.
	var pending []tea.Msg
	for i := 0; i < 50 && pending == nil; i++ {
		m, pending = down(t, m)
	}
	if pending == nil {
		t.Fatal("no page requested while scrolling to the end of page 1")
	}
	s = m.current()
	if s.cursor < 50-m.listHeight(s)-1 {
		t.Errorf("page 2 requested with the cursor at %d of 50, not near the end", s.cursor)
	}
	if !s.loading {
		t.Error("screen not marked loading while page 2 is in flight")
	}

	// More movement while the page is in flight sends nothing more.
	for i := 0; i < 20; i++ {
		var out []tea.Msg
		m, out = down(t, m)
		if len(out) != 0 {
			t.Fatalf("duplicate load while page 2 in flight: %v", out)
		}
	}
	cursor := m.current().cursor
	for _, msg := range pending {
		m = settle(t, m, msg)
	}
	s = m.current()
	if len(s.rows) != 100 || s.cursor != cursor {
		t.Fatalf("after page 2: %d rows, cursor %d; want 100 rows, cursor kept at %d", len(s.rows), s.cursor, cursor)
	}

	// The end of the list loads the last page, then nothing more.
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	s = m.current()
	if len(s.rows) != 120 || !s.done {
		t.Fatalf("after end: %d rows, done=%v; want all 120", len(s.rows), s.done)
	}
	if got := pageCalls(api, "ListRepositories"); !slices.Equal(got, []string{"ListRepositories::1", "ListRepositories::2", "ListRepositories::3"}) {
		t.Errorf("pages requested = %v, want each page once", got)
	}
	if s.rows[119].key != "repo-119" || s.selectedKey() != "repo-119" {
		t.Errorf("cursor not on the last repository: %q", s.selectedKey())
	}
}

func TestPagingStopsOnErrorUntilRefresh(t *testing.T) {
	api := newFakeAPI()
	api.repos = manyRepos(120)
	m := newTestModel(t, api, 100, 30)
	api.setErr("ListRepositories", &client.Error{StatusCode: 429, Code: client.CodeRateLimitExceeded, RetryAfter: 5e9})

	m = settle(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	if !strings.Contains(m.status, "until 10:30:05") {
		t.Fatalf("status = %q, want the rate limit", m.status)
	}
	before := len(api.callLog())
	for i := 0; i < 5; i++ {
		m = settle(t, m, tea.KeyMsg{Type: tea.KeyUp})
		m = settle(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	}
	if after := len(api.callLog()); after != before {
		t.Errorf("%d more requests after a 429 without refresh", after-before)
	}

	api.setErr("ListRepositories", nil)
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	if m.status != "" {
		t.Errorf("status after a successful refresh = %q", m.status)
	}
	if s := m.current(); s.selectedKey() != "repo-049" {
		t.Errorf("refresh moved the cursor to %q, want it kept on repo-049", s.selectedKey())
	}
}

func TestRefreshDropsStaleAnswers(t *testing.T) {
	api := newFakeAPI()
	m := newTestModel(t, api, 100, 30)
	api.repos = api.repos[:1]

	// A refresh while an older answer is still on its way: the old one
	// must not overwrite the new one.
	m, first := step(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	m, second := step(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	for _, msg := range append(second, first...) {
		m = settle(t, m, msg)
	}
	if s := m.current(); len(s.rows) != 1 || s.loading || m.inflight != 0 {
		t.Errorf("rows=%d loading=%v inflight=%d; want 1 row, idle", len(s.rows), s.loading, m.inflight)
	}
}

func TestTeamsLoadOnFirstVisit(t *testing.T) {
	api := newFakeAPI()
	m := newTestModel(t, api, 100, 30)
	if got := pageCalls(api, "ListTeams"); len(got) != 0 {
		t.Fatalf("teams loaded before the tab was opened: %v", got)
	}
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyTab})
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyTab})
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyTab})
	if got := pageCalls(api, "ListTeams"); len(got) != 1 {
		t.Errorf("teams requested %d times, want once: %v", len(got), got)
	}
	if m.tab != tabTeams || len(m.current().rows) != 3 {
		t.Errorf("tab %d with %d rows, want the 3 teams", m.tab, len(m.current().rows))
	}
}

// navigations reach every view from the start.
var navigations = map[string][]tea.Msg{
	"repositories": nil,
	"charts":       {press("enter")},
	"versions":     {press("enter"), press("enter")},
	"detail":       {press("enter"), press("enter"), press("enter")},
	"search":       {press("/"), press("n"), press("g"), press("enter")},
	"filter":       {press("/"), press("a")},
	"help":         {press("?")},
	"teams":        {press("tab")},
	"members":      {press("tab"), press("down"), press("enter")},
}

func press(k string) tea.Msg { return keyMsg(k) }

// TestLayoutFitsWindow checks that no view draws a line wider than the
// window or more lines than it has, at the smallest supported size, a
// large one, and after resizing between them.
func TestLayoutFitsWindow(t *testing.T) {
	sizes := [][2]int{{60, 20}, {200, 60}, {100, 30}, {60, 20}, {30, 10}}
	for name, keys := range navigations {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI()
			long := strings.Repeat("very long description with 漢字 and emoji 🚀 ", 12)
			api.repos[0].Description = long
			api.repos[0].Name = strings.Repeat("a", 63)
			for i := range api.charts["apps"] {
				api.charts["apps"][i].Description = long
				api.charts["apps"][i].Keywords = strings.Fields(long)
			}
			api.charts[api.repos[0].Name] = api.charts["apps"]
			api.teams[0].Description = long
			m := newTestModel(t, api, sizes[0][0], sizes[0][1])
			for _, k := range keys {
				m = settle(t, m, k)
			}
			for _, sz := range sizes {
				m = settle(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				assertFits(t, m.View(), sz[0], sz[1])
			}
			if name != "help" && name != "detail" && !strings.Contains(m.View(), cursorMarker) {
				t.Errorf("after resizing, the selected row is off screen:\n%s", m.View())
			}
		})
	}
}

func assertFits(t *testing.T, view string, width, height int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != height {
		t.Errorf("%dx%d: view has %d lines", width, height, len(lines))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("%dx%d: line %d is %d cells wide: %q", width, height, i, w, l)
		}
	}
}

// TestResizeUsesTheSpace checks that a large window shows more rows and
// full descriptions, and a small one still shows the essentials.
func TestResizeUsesTheSpace(t *testing.T) {
	api := newFakeAPI()
	api.repos = manyRepos(120)
	api.repos[0].Description = strings.Repeat("wide ", 30)
	m := newTestModel(t, api, 60, 20)
	small := m.View()
	m = settle(t, m, tea.WindowSizeMsg{Width: 200, Height: 60})
	large := m.View()

	count := func(v string) int { return strings.Count(v, "repo-") }
	if count(small) >= count(large) {
		t.Errorf("large window shows %d repositories, small %d", count(large), count(small))
	}
	if !strings.Contains(large, strings.TrimSpace(strings.Repeat("wide ", 30))) {
		t.Error("200 columns do not show a 150-character description in full")
	}
	if !strings.Contains(small, "repo-000") || !strings.Contains(small, "…") {
		t.Errorf("60 columns should show names and cut the description:\n%s", small)
	}
}

func TestDetailScrollStaysInContent(t *testing.T) {
	api := newFakeAPI()
	m := newTestModel(t, api, 60, 12)
	for _, k := range navigations["detail"] {
		m = settle(t, m, k)
	}
	total := len(m.detailLines(m.current(), 60))
	if want := fmt.Sprintf("lines 1–8 of %d · ↑↓ scroll", total); !strings.Contains(m.View(), want) {
		t.Errorf("a detail taller than the window does not say so (%q):\n%s", want, m.View())
	}
	if strings.Contains(m.View(), "/ filter") {
		t.Errorf("the footer offers a filter on a detail:\n%s", m.View())
	}
	for i := 0; i < 100; i++ {
		m = settle(t, m, press("down"))
	}
	s := m.current()
	if s.scroll != m.detailScrollMax(s) || s.scroll == 0 {
		t.Errorf("scroll = %d, want clamped at %d > 0", s.scroll, m.detailScrollMax(s))
	}
	if !strings.Contains(m.View(), "--version 1.2.0") {
		t.Errorf("bottom of the detail not shown:\n%s", m.View())
	}
	if want := fmt.Sprintf("lines %d–%d of %d", total-7, total, total); !strings.Contains(m.View(), want) {
		t.Errorf("at the bottom the status line does not say %q:\n%s", want, m.View())
	}
	bottom := s.scroll
	m = settle(t, m, press("up"))
	if m.current().scroll != bottom-1 {
		t.Error("one step up after scrolling past the end does not move")
	}
}

// TestFastTypingIsSplitIntoKeys: keys typed quickly reach the program as
// one message with several runes; "/inf" must open the filter and type
// "inf" into it.
func TestFastTypingIsSplitIntoKeys(t *testing.T) {
	m := newTestModel(t, newFakeAPI(), 100, 30)
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/inf")})
	s := m.current()
	if !s.filtering || s.filter.Value() != "inf" || len(s.visible) != 1 {
		t.Fatalf("filtering=%v value=%q visible=%d; want the filter open with “inf” and one match", s.filtering, s.filter.Value(), len(s.visible))
	}
	// A paste into the filter stays one piece of text.
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("ra q"), Paste: true})
	if got := m.current().filter.Value(); got != "infra q" {
		t.Errorf("after paste, filter = %q", got)
	}
}

// TestRefreshKeepsPlaceDeepInTheList: refreshing with the cursor on the
// last of three loaded pages reloads as many pages, keeps the old rows on
// screen meanwhile, and leaves the cursor on the same row.
func TestRefreshKeepsPlaceDeepInTheList(t *testing.T) {
	api := newFakeAPI()
	api.repos = manyRepos(120)
	m := newTestModel(t, api, 100, 30)
	for i := 0; i < 3; i++ { // each End loads one more page
		m = settle(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	}
	m = settle(t, m, tea.KeyMsg{Type: tea.KeyUp})
	if got := m.current().selectedKey(); got != "repo-118" {
		t.Fatalf("before refresh the cursor is on %q", got)
	}
	api.repos[118].Description = "changed on the server"
	before := len(pageCalls(api, "ListRepositories"))

	m, pending := step(t, m, press("r"))
	for len(pending) > 0 {
		if s := m.current(); len(s.rows) != 120 || s.selectedKey() != "repo-118" {
			t.Fatalf("while refreshing: %d rows, cursor on %q; want the old 120 rows, cursor kept", len(s.rows), s.selectedKey())
		}
		var next []tea.Msg
		for _, msg := range pending {
			var out []tea.Msg
			m, out = step(t, m, msg)
			next = append(next, out...)
		}
		pending = next
	}
	s := m.current()
	if s.selectedKey() != "repo-118" || len(s.rows) != 120 || !s.done {
		t.Errorf("after refresh: cursor on %q, %d rows, done=%v; want repo-118 of all 120", s.selectedKey(), len(s.rows), s.done)
	}
	if r, _ := s.current(); r.cells[3] != "changed on the server" {
		t.Errorf("refresh did not load the new description: %q", r.cells)
	}
	if got := pageCalls(api, "ListRepositories")[before:]; !slices.Equal(got, []string{"ListRepositories::1", "ListRepositories::2", "ListRepositories::3"}) {
		t.Errorf("refresh requested %v, want pages 1 to 3 once", got)
	}
	if !strings.Contains(m.View(), cursorMarker+"repo-118") {
		t.Errorf("the selected row is not on screen after refresh:\n%s", m.View())
	}
}

// TestFailedRefreshKeepsRows: a refresh that fails on a later page leaves
// the rows that were shown, and the error in the status line.
func TestFailedRefreshKeepsRows(t *testing.T) {
	api := newFakeAPI()
	api.repos = manyRepos(120)
	m := newTestModel(t, api, 100, 30)
	for i := 0; i < 3; i++ { // each End loads one more page
		m = settle(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	}

	m, pending := step(t, m, press("r"))
	api.setErr("ListRepositories", &client.Error{StatusCode: 503, Message: "restarting"})
	for _, msg := range pending {
		m = settle(t, m, msg) // page 1 succeeds, page 2 fails
	}
	s := m.current()
	if len(s.rows) != 120 || s.selectedKey() != "repo-119" || s.loading || m.inflight != 0 {
		t.Errorf("after a failed refresh: %d rows, cursor on %q, loading=%v, inflight=%d", len(s.rows), s.selectedKey(), s.loading, m.inflight)
	}
	if m.status != "server error 503: restarting" {
		t.Errorf("status = %q", m.status)
	}
}

// TestChartCountOfAPartlyLoadedChart: the last chart of a page may have
// more versions on the next; its count says so until that page is in.
func TestChartCountOfAPartlyLoadedChart(t *testing.T) {
	api := newFakeAPI()
	var charts []client.Chart
	for _, name := range []string{"alpha", "beta"} {
		for v := 3; v >= 1; v-- {
			charts = append(charts, chartVersion(name, fmt.Sprintf("%d.0.0", v), "1.0", name+" chart"))
		}
	}
	api.charts["apps"] = charts
	m := New(api, Options{Server: testServer, PageSize: 4})
	m = settle(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, msg := range exec(m.Init()) {
		m = settle(t, m, msg)
	}
	// Open apps and take its first page only: alpha 3, beta 1 of 3. The
	// short list asks for page 2 at once; hold it back.
	m, pending := step(t, m, press("enter"))
	var page2 []tea.Msg
	for _, msg := range pending {
		var out []tea.Msg
		m, out = step(t, m, msg)
		page2 = append(page2, out...)
	}
	s := m.current()
	if got := [][]string{s.rows[0].cells[:4], s.rows[1].cells[:4]}; got[0][3] != "3" || got[1][3] != "1+" || got[1][1] != "3.0.0" {
		t.Fatalf("after page 1: %q; want alpha 3 and beta 1+ (latest 3.0.0)", got)
	}
	for _, msg := range page2 {
		m = settle(t, m, msg)
	}
	s = m.current()
	if !s.done || s.rows[0].cells[3] != "3" || s.rows[1].cells[3] != "3" {
		t.Errorf("after page 2: done=%v, counts %q and %q; want 3 and 3", s.done, s.rows[0].cells[3], s.rows[1].cells[3])
	}
}

// TestDetailInstallLinesStayWhole checks that an install command too long
// for the window is wrapped onto continuation lines that fit, so joining
// them gives back the whole command: none of it may be cut off by the
// window's edge, or the line a user copies no longer works.
func TestDetailInstallLinesStayWhole(t *testing.T) {
	api := newFakeAPI()
	long := "this-is-a-very-long-chart-name-that-might-break-layouts-in-the-tui"
	api.charts["apps"] = []client.Chart{chartVersion(long, "0.1.0", "1.0.0", "Long name")}
	for _, width := range []int{60, 80, 121} {
		m := newTestModel(t, api, width, 60)
		for _, k := range navigations["detail"] {
			m = settle(t, m, k)
		}
		view := strings.Split(m.View(), "\n")
		var cmds []string
		install := false
		for _, l := range view {
			switch {
			case strings.TrimSpace(l) == "Install":
				install = true
			case !install:
			case strings.TrimSpace(l) == "":
				install = false
			case strings.HasPrefix(l, "     ") && len(cmds) > 0:
				cmds[len(cmds)-1] += strings.TrimPrefix(l, "     ")
			case strings.HasPrefix(l, "   helm"):
				cmds = append(cmds, strings.TrimPrefix(l, "   "))
			}
		}
		want := client.Install(testServer, "apps", long, "0.1.0", false)
		if !slices.Equal(cmds, []string{want.RepoAdd, want.Install, want.OCIInstall}) {
			t.Errorf("at %d columns the install lines read back as\n%s\nwant\n%s\n%s\n%s\nview:\n%s",
				width, strings.Join(cmds, "\n"), want.RepoAdd, want.Install, want.OCIInstall, m.View())
		}
	}
}
