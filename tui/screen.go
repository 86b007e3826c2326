package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
)

// viewKind is the state enum: what a screen shows.
type viewKind int

const (
	viewRepos viewKind = iota
	viewSearch
	viewCharts
	viewVersions
	viewDetail
	viewTeams
	viewMembers
	viewAccess
	viewDiff
)

// String names the kind, for messages and test failures.
func (k viewKind) String() string {
	switch k {
	case viewRepos:
		return "repositories"
	case viewSearch:
		return "search results"
	case viewCharts:
		return "charts"
	case viewVersions:
		return "versions"
	case viewDetail:
		return "version"
	case viewTeams:
		return "teams"
	case viewMembers:
		return "members"
	case viewAccess:
		return "grants"
	case viewDiff:
		return "values diff"
	}
	return "view " + strconv.Itoa(int(k))
}

// columns returns the table columns of a list kind.
func (k viewKind) columns() []column {
	switch k {
	case viewRepos:
		return []column{
			{title: "NAME", min: 8, max: 32},
			{title: "VISIBILITY", min: 7, max: 10},
			{title: "ORGANIZATION", min: 6, max: 20, drop: 2},
			{title: "DESCRIPTION", min: 10, drop: 1},
		}
	case viewSearch:
		return []column{
			{title: "REPOSITORY", min: 8, max: 24},
			{title: "CHART", min: 8, max: 30},
			{title: "VERSION", min: 7, max: 20},
			{title: "APP VERSION", min: 5, max: 16, drop: 2},
			{title: "DESCRIPTION", min: 10, drop: 1},
		}
	case viewCharts:
		return []column{
			{title: "NAME", min: 8, max: 32},
			{title: "LATEST", min: 6, max: 20},
			{title: "APP VERSION", min: 5, max: 16, drop: 2},
			{title: "VERSIONS", min: 3, max: 8, drop: 3},
			{title: "DESCRIPTION", min: 10, drop: 1},
		}
	case viewVersions:
		return []column{
			{title: "VERSION", min: 7, max: 24},
			{title: "APP VERSION", min: 5, max: 16, drop: 2},
			{title: "CREATED", min: 10, max: 10, drop: 3},
			{title: "DIGEST", min: 12, max: 19, drop: 4},
			{title: "DESCRIPTION", min: 10, drop: 1},
		}
	case viewTeams:
		return []column{
			{title: "ORGANIZATION", min: 8, max: 24},
			{title: "TEAM", min: 8, max: 30},
			{title: "MEMBERS", min: 3, max: 7, drop: 2},
			{title: "DESCRIPTION", min: 10, drop: 1},
		}
	case viewMembers:
		return []column{
			{title: "EMAIL", min: 10, max: 48},
			{title: "ROLE", min: 6, max: 10},
			{title: "ADDED", min: 10, max: 10, drop: 1},
		}
	case viewAccess:
		return []column{
			{title: "KIND", min: 4, max: 4},
			{title: "NAME", min: 10, max: 48},
			{title: "ROLE", min: 8, max: 8},
			{title: "GRANTED", min: 10, max: 10, drop: 1},
		}
	}
	return nil
}

// row is one line of a list: sanitized cells, the text a filter matches,
// and the item it stands for.
type row struct {
	key   string
	cells []string
	match string
	item  any
}

// chartGroup is one chart of a repository: its latest version and how
// many versions were listed. partial marks the last chart of a list with
// more pages to come, whose other versions may be on the next page.
type chartGroup struct {
	// latest is the latest of the versions listed so far by client.Latest
	// (the newest stable one, as the CLI, the dashboard and Helm pick
	// it); with only pre-releases listed, the newest of them, and pre set.
	latest  client.Chart
	pre     bool
	count   int
	partial bool
}

// add counts one more listed version of the chart and keeps the latest:
// client.Latest of the latest so far and c, pre-releases counting only
// while no stable version has been seen.
func (g *chartGroup) add(c client.Chart) {
	g.count++
	_, stable := client.Latest([]string{c.Version}, false)
	switch {
	case g.count == 1:
		g.latest, g.pre = c, !stable
	case g.pre && stable:
		// A stable version beats every pre-release, older or not.
		g.latest, g.pre = c, false
	default:
		if v, ok := client.Latest([]string{g.latest.Version, c.Version}, g.pre); ok && v == c.Version && v != g.latest.Version {
			g.latest = c
		}
	}
}

func newRow(key string, item any, cells ...string) row {
	for i := range cells {
		cells[i] = termtext.Line(cells[i])
	}
	return row{key: key, cells: cells, match: strings.ToLower(strings.Join(cells, "\x00")), item: item}
}

func repoRow(r client.Repository) row {
	org := ""
	if r.Organization != nil {
		org = *r.Organization
	}
	return newRow(r.Name, r, r.Name, r.Visibility, org, r.Description)
}

func searchRow(r client.SearchResult) row {
	return newRow(r.Repository+"/"+r.Name, r, r.Repository, r.Name, r.Version, r.AppVersion, r.Description)
}

func chartGroupRow(g chartGroup) row {
	c := g.latest
	count := strconv.Itoa(g.count)
	if g.partial {
		count += "+"
	}
	version := c.Version
	if g.pre {
		// No stable version: the newest pre-release, marked as one.
		version += " (pre)"
	}
	return newRow(c.Name, g, c.Name, version, c.AppVersion, count, c.Description)
}

func versionRow(c client.Chart) row {
	return newRow(c.Version, c, c.Version, c.AppVersion, formatDate(c.CreatedAt), shortDigest(c.Digest), c.Description)
}

func teamRow(t client.Team) row {
	return newRow(t.Organization+"/"+t.Name, t, t.Organization, t.Name, strconv.Itoa(t.MemberCount), t.Description)
}

func memberRow(mb client.Member) row {
	key := mb.ID
	if key == "" {
		key = mb.Email
	}
	return newRow(key, mb, mb.Email, mb.Role, formatDate(mb.AddedAt))
}

func grantRow(g client.Grant) row {
	return newRow(g.Kind+":"+g.Name, g, g.Kind, g.Name, g.Role, formatDate(g.CreatedAt))
}

// formatDate shows a timestamp as a UTC date; absolute so a screen does
// not change while it is looked at.
func formatDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

// formatTime shows a timestamp in UTC to the minute.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// shortDigest keeps the algorithm and the first 12 hex digits.
func shortDigest(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok {
		algo, hex = "sha256", d
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if hex == "" {
		return ""
	}
	return algo + ":" + hex
}

// formatSize shows a byte count for people.
func formatSize(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for x := n / unit; x >= unit; x /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}

// screen is one level of navigation: a list that pages from the server, or
// the detail of a chart version.
type screen struct {
	id    int
	kind  viewKind
	title string

	// What the screen shows.
	repo, chart, version, team, query string
	// private: the repository is known to be private, so Helm needs a
	// credential to add it.
	private bool

	rows    []row
	groups  map[string]int // chart name → index in rows (viewCharts)
	visible []int          // indexes into rows that pass the filter
	cursor  int            // index into visible
	offset  int            // first index of visible on screen

	filter    textinput.Model
	filtering bool // the filter input has the focus

	page    int  // pages loaded
	total   int  // total items as the server counts them
	done    bool // no more pages
	loading bool
	loaded  bool // the first answer arrived
	failed  bool // the last load failed: no automatic paging until refresh
	gen     int  // bumped by refresh; answers for older generations are dropped
	keepKey string

	// refill collects the pages of a refresh while the old rows stay on
	// screen; they replace the old ones once as many pages are in as were
	// loaded before (refillPages) or the list ended, so a refresh keeps the
	// cursor on its row however far down the list it was.
	refill      *screen
	refillPages int

	detail client.Chart // viewDetail
	scroll int          // viewDetail, viewDiff: first line shown

	// mark is the version marked on a versions list, which the diff key
	// compares with the one under the cursor ("" for none).
	mark string
	// from and diff are what a viewDiff compares (from → version) and
	// the server's answer.
	from string
	diff client.ChartDiff
}

func newScreen(id int, kind viewKind, title string) *screen {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "type to filter"
	// A static cursor: no blink timer, nothing redraws while idle.
	ti.Cursor.SetMode(cursor.CursorStatic)
	return &screen{id: id, kind: kind, title: title, filter: ti}
}

// hasAccessToggle reports whether the access key works on s: a
// repository's charts, and the access list it opens.
func (s *screen) hasAccessToggle() bool { return s.kind == viewCharts || s.kind == viewAccess }

// isList reports whether the screen is a paged list.
func (s *screen) isList() bool { return s.kind != viewDetail && s.kind != viewDiff }

// current returns the row under the cursor.
func (s *screen) current() (row, bool) {
	if s.cursor < 0 || s.cursor >= len(s.visible) {
		return row{}, false
	}
	return s.rows[s.visible[s.cursor]], true
}

// reset starts a refresh: pages load into a fresh refill screen while the
// rows shown stay, and the row under the cursor is remembered to select
// it again.
func (s *screen) reset() {
	if r, ok := s.current(); ok {
		s.keepKey = r.key
	}
	s.gen++
	s.failed = false
	if s.isList() {
		s.refill = &screen{id: s.id, kind: s.kind}
		s.refillPages = max(s.page, 1)
	}
}

// refillDone reports whether a refresh has loaded as much as was shown.
func (s *screen) refillDone() bool {
	return s.refill.done || s.refill.page >= s.refillPages
}

// swapRefill replaces the rows with those a refresh loaded.
func (s *screen) swapRefill() {
	f := s.refill
	s.rows, s.groups, s.page, s.total, s.done = f.rows, f.groups, f.page, f.total, f.done
	s.refill = nil
}

// appendPage adds one page of items. Page 1 replaces what was there.
func (s *screen) appendPage(msg pageMsg) {
	if msg.page == 1 {
		if r, ok := s.current(); ok && s.keepKey == "" {
			s.keepKey = r.key
		}
		s.rows = nil
		s.groups = nil
	}
	switch s.kind {
	case viewRepos:
		for _, r := range msg.repos {
			s.rows = append(s.rows, repoRow(r))
		}
	case viewSearch:
		for _, r := range msg.results {
			s.rows = append(s.rows, searchRow(r))
		}
	case viewCharts:
		// The server lists every version, ordered by name and then newest
		// first; each group keeps its latest among the versions seen.
		if s.groups == nil {
			s.groups = map[string]int{}
		}
		if n := len(s.rows); n > 0 {
			s.setPartial(n-1, false) // this page continues or ends it
		}
		for _, c := range msg.charts {
			if i, ok := s.groups[c.Name]; ok {
				g := s.rows[i].item.(chartGroup)
				g.add(c)
				s.rows[i] = chartGroupRow(g)
				continue
			}
			s.groups[c.Name] = len(s.rows)
			var g chartGroup
			g.add(c)
			s.rows = append(s.rows, chartGroupRow(g))
		}
	case viewVersions:
		for _, c := range msg.charts {
			s.rows = append(s.rows, versionRow(c))
		}
	case viewTeams:
		for _, t := range msg.teams {
			s.rows = append(s.rows, teamRow(t))
		}
		// Teams are shown grouped by organization.
		sort.SliceStable(s.rows, func(i, j int) bool {
			a, b := s.rows[i].item.(client.Team), s.rows[j].item.(client.Team)
			if a.Organization != b.Organization {
				return a.Organization < b.Organization
			}
			return a.Name < b.Name
		})
	case viewMembers:
		for _, mb := range msg.members {
			s.rows = append(s.rows, memberRow(mb))
		}
	case viewAccess:
		for _, g := range msg.grants {
			s.rows = append(s.rows, grantRow(g))
		}
	}
	s.page = msg.page
	s.total = msg.meta.Total
	n := msg.count()
	limit := msg.meta.Limit
	if limit <= 0 {
		limit = msg.limit
	}
	s.done = n == 0 || n < limit || (s.total > 0 && msg.page*limit >= s.total)
	if s.kind == viewCharts && len(s.rows) > 0 {
		// Only the last chart can continue on the next page.
		s.setPartial(len(s.rows)-1, !s.done)
	}
}

// setPartial marks whether the chart in row i may have more versions on
// pages not loaded yet.
func (s *screen) setPartial(i int, partial bool) {
	g := s.rows[i].item.(chartGroup)
	if g.partial != partial {
		g.partial = partial
		s.rows[i] = chartGroupRow(g)
	}
}

// selectedKey returns the key under the cursor, or "".
func (s *screen) selectedKey() string {
	if r, ok := s.current(); ok {
		return r.key
	}
	return ""
}

// applyFilter recomputes the visible rows, keeping the cursor on the same
// row when it is still visible (or on keepKey after a refresh).
func (s *screen) applyFilter() {
	want := s.keepKey
	if want == "" {
		want = s.selectedKey()
	}
	q := strings.ToLower(strings.TrimSpace(s.filter.Value()))
	s.visible = s.visible[:0]
	for i, r := range s.rows {
		if q == "" || strings.Contains(r.match, q) {
			s.visible = append(s.visible, i)
		}
	}
	s.cursor = 0
	if want != "" {
		for i, ri := range s.visible {
			if s.rows[ri].key == want {
				s.cursor = i
				break
			}
		}
	}
	s.keepKey = ""
}

// move moves the cursor by delta rows within the visible rows.
func (s *screen) move(delta int) {
	s.cursor = max(0, min(s.cursor+delta, len(s.visible)-1))
}

// scrollInto keeps the cursor inside a window of height rows.
func (s *screen) scrollInto(height int) {
	height = max(height, 1)
	if s.cursor < s.offset {
		s.offset = s.cursor
	}
	if s.cursor >= s.offset+height {
		s.offset = s.cursor - height + 1
	}
	s.offset = max(0, min(s.offset, len(s.visible)-height))
}

// nearEnd reports whether the cursor is within lookahead rows of the last
// loaded row, the moment to fetch the next page.
func (s *screen) nearEnd(lookahead int) bool {
	return len(s.visible)-1-s.cursor <= lookahead
}

// filterShown reports whether the filter line takes a row of the screen.
func (s *screen) filterShown() bool {
	return s.filtering || s.filter.Value() != ""
}
