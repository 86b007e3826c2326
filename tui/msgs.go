package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/chartctl/chartctl/client"
)

// rateInfo is the rate-limit budget last reported by the server.
type rateInfo struct {
	remaining, limit int
	ok               bool
}

// pageMsg carries one page of a list screen, or the error that replaced it.
type pageMsg struct {
	screenID int
	gen      int
	page     int
	limit    int

	repos   []client.Repository
	results []client.SearchResult
	charts  []client.Chart
	teams   []client.Team
	members []client.Member
	grants  []client.Grant
	meta    client.Meta

	err  error
	rate rateInfo
}

// count is the number of items in the page.
func (m pageMsg) count() int {
	return len(m.repos) + len(m.results) + len(m.charts) + len(m.teams) + len(m.members) + len(m.grants)
}

// detailMsg carries one chart version's metadata.
type detailMsg struct {
	screenID int
	gen      int
	chart    client.Chart
	diff     client.ChartDiff
	err      error
	rate     rateInfo
}

// request is what a command needs to know about the screen it loads: a
// copy, so the command never shares memory with the model.
type request struct {
	screenID, gen, page, limit int
	kind                       viewKind
	repo, chart, version, team string
	query, from                string
}

// fetch returns the command that performs one request.
func fetch(ctx context.Context, api API, timeout time.Duration, req request) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if req.kind == viewDiff {
			d, err := api.Diff(ctx, req.repo, req.chart, req.from, req.version)
			return detailMsg{screenID: req.screenID, gen: req.gen, diff: d, err: err, rate: readRate(api)}
		}
		if req.kind == viewDetail {
			c, err := api.ChartVersion(ctx, req.repo, req.chart, req.version)
			return detailMsg{screenID: req.screenID, gen: req.gen, chart: c, err: err, rate: readRate(api)}
		}
		msg := pageMsg{screenID: req.screenID, gen: req.gen, page: req.page, limit: req.limit}
		switch req.kind {
		case viewRepos:
			msg.repos, msg.meta, msg.err = api.ListRepositories(ctx, req.page, req.limit)
		case viewSearch:
			msg.results, msg.meta, msg.err = api.SearchCharts(ctx, req.query, req.page, req.limit)
		case viewCharts:
			msg.charts, msg.meta, msg.err = api.ListCharts(ctx, req.repo, req.page, req.limit)
		case viewVersions:
			msg.charts, msg.meta, msg.err = api.ChartVersions(ctx, req.repo, req.chart, req.page, req.limit)
		case viewTeams:
			msg.teams, msg.meta, msg.err = api.ListTeams(ctx, req.page, req.limit)
		case viewMembers:
			msg.members, msg.meta, msg.err = api.ListMembers(ctx, req.team, req.page, req.limit)
		case viewAccess:
			msg.grants, msg.meta, msg.err = api.RepositoryAccess(ctx, req.repo, req.page, req.limit)
		}
		msg.rate = readRate(api)
		return msg
	}
}

func readRate(api API) rateInfo {
	remaining, limit, ok := api.RateLimit()
	return rateInfo{remaining: remaining, limit: limit, ok: ok}
}
