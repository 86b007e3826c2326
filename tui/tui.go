// Package tui is the terminal browser of chartctl (`chartctl tui`): a
// bubbletea program that lists repositories, the charts in them, their
// versions and one version's details, and in a second tab the teams and
// their members.
//
// It talks to the server only through API, a narrow slice of the client
// SDK, so it can be driven by a fake in tests. Following glow and gh-dash,
// the root Model holds a stack of screens per tab, every server call runs
// inside a tea.Cmd and comes back as a typed message, and sizes and styles
// live in one shared struct.
package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/chartctl/chartctl/client"
)

// API is what the browser needs from the chartctl SDK. Every list method
// takes a 1-based page and a page size and returns the page's pagination
// metadata. Errors are *client.Error for answers from the server.
type API interface {
	// ListRepositories lists the repositories the caller can read.
	ListRepositories(ctx context.Context, page, limit int) ([]client.Repository, client.Meta, error)
	// ListCharts lists the chart versions of a repository, ordered by chart
	// name and then by version, newest first.
	ListCharts(ctx context.Context, repo string, page, limit int) ([]client.Chart, client.Meta, error)
	// ChartVersions lists the versions of one chart, newest first.
	ChartVersions(ctx context.Context, repo, name string, page, limit int) ([]client.Chart, client.Meta, error)
	// ChartVersion returns one version's metadata.
	ChartVersion(ctx context.Context, repo, name, version string) (client.Chart, error)
	// SearchCharts searches charts across all readable repositories.
	SearchCharts(ctx context.Context, query string, page, limit int) ([]client.SearchResult, client.Meta, error)
	// ListTeams lists the teams the caller can see.
	ListTeams(ctx context.Context, page, limit int) ([]client.Team, client.Meta, error)
	// ListMembers lists the members of a team.
	ListMembers(ctx context.Context, team string, page, limit int) ([]client.Member, client.Meta, error)
	// RepositoryAccess lists the grants on a repository, teams first (its
	// admins only: anyone else gets a 403 or 404 *client.Error).
	RepositoryAccess(ctx context.Context, repo string, page, limit int) ([]client.Grant, client.Meta, error)
	// Diff compares two versions of a chart in repo: files, and
	// values.yaml by key.
	Diff(ctx context.Context, repo, name, from, to string) (client.ChartDiff, error)
	// RateLimit returns the rate-limit budget seen in the latest response;
	// ok is false before any response carried one. It must not block.
	RateLimit() (remaining, limit int, ok bool)
}

// Defaults of Options.
const (
	DefaultPageSize       = 50
	DefaultRequestTimeout = 30 * time.Second
)

// Options configure the browser.
type Options struct {
	// Server is the server's base URL, shown in the footer and used in the
	// `helm repo add` line of a chart version.
	Server string
	// PageSize is the number of items one request asks for, 1..100.
	// Zero means DefaultPageSize.
	PageSize int
	// NoColor turns colours off. Run turns it on when NO_COLOR is set.
	NoColor bool
	// Unauthorized is what the status line says when the server refuses
	// the credential (401), naming where it came from and what to do;
	// empty means "not signed in: run chartctl login".
	Unauthorized string
	// RequestTimeout bounds each API call. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Input and Output replace the terminal's stdin and stdout when set.
	Input  io.Reader
	Output io.Writer
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.PageSize > 100 {
		o.PageSize = 100
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Output == nil {
		o.Output = os.Stdout
	}
	return o
}

// Run shows the browser in the terminal's alternate screen until the user
// quits or ctx is cancelled. API calls use ctx.
func Run(ctx context.Context, api API, opts Options) error {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	m := New(api, opts)
	m.ctx = ctx
	popts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if _, err := tea.NewProgram(m, popts...).Run(); err != nil {
		return fmt.Errorf("run terminal browser: %w", err)
	}
	return nil
}
