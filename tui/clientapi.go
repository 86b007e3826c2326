package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chartctl/chartctl/client"
)

// clientAPI adapts the SDK's *client.Client to API and remembers the
// rate-limit budget of the latest answer.
type clientAPI struct {
	c *client.Client

	mu   sync.Mutex
	rate client.Rate
}

// NewClientAPI returns the API of the browser backed by the SDK client c.
// The client carries the credentials, the same as the CLI's. Its retries
// run inside the browser's background commands, so the UI keeps drawing
// while the client waits out a 429; a client built with few retries shows
// rate limits sooner.
func NewClientAPI(c *client.Client) API {
	return &clientAPI{c: c}
}

// observe records the rate-limit headers of an answer, successful or not.
func (a *clientAPI) observe(resp *client.Response, err error) {
	var r client.Rate
	var ce *client.Error
	switch {
	case resp != nil && resp.Rate.Limit > 0:
		r = resp.Rate
	case errors.As(err, &ce) && ce.Rate.Limit > 0:
		r = ce.Rate
	default:
		return
	}
	a.mu.Lock()
	a.rate = r
	a.mu.Unlock()
}

// RateLimit implements API.
func (a *clientAPI) RateLimit() (remaining, limit int, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rate.Remaining, a.rate.Limit, a.rate.Limit > 0
}

// meta returns the pagination of resp, or the one the request asked for.
func meta(resp *client.Response, page, limit int) client.Meta {
	if resp != nil && resp.Meta != nil {
		return *resp.Meta
	}
	return client.Meta{Page: page, Limit: limit}
}

// values turns the SDK's pointer slices into values.
func values[T any](in []*T) []T {
	out := make([]T, 0, len(in))
	for _, p := range in {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// ListRepositories implements API.
func (a *clientAPI) ListRepositories(ctx context.Context, page, limit int) ([]client.Repository, client.Meta, error) {
	items, resp, err := a.c.Repositories.List(ctx, &client.ListOptions{Page: page, Limit: limit})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("list repositories: %w", err)
	}
	return values(items), meta(resp, page, limit), nil
}

// ListCharts implements API.
func (a *clientAPI) ListCharts(ctx context.Context, repo string, page, limit int) ([]client.Chart, client.Meta, error) {
	items, resp, err := a.c.Charts.List(ctx, repo, &client.ChartListOptions{ListOptions: client.ListOptions{Page: page, Limit: limit}})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("list charts of %s: %w", repo, err)
	}
	return values(items), meta(resp, page, limit), nil
}

// ChartVersions implements API.
func (a *clientAPI) ChartVersions(ctx context.Context, repo, name string, page, limit int) ([]client.Chart, client.Meta, error) {
	items, resp, err := a.c.Charts.Versions(ctx, repo, name, &client.ListOptions{Page: page, Limit: limit})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("list versions of %s/%s: %w", repo, name, err)
	}
	return values(items), meta(resp, page, limit), nil
}

// ChartVersion implements API.
func (a *clientAPI) ChartVersion(ctx context.Context, repo, name, version string) (client.Chart, error) {
	c, resp, err := a.c.Charts.Get(ctx, repo, name, version)
	a.observe(resp, err)
	if err != nil {
		return client.Chart{}, fmt.Errorf("get %s/%s %s: %w", repo, name, version, err)
	}
	return *c, nil
}

// Diff implements API.
func (a *clientAPI) Diff(ctx context.Context, repo, name, from, to string) (client.ChartDiff, error) {
	d, resp, err := a.c.Charts.Diff(ctx, repo, name, from, to, nil)
	a.observe(resp, err)
	if err != nil {
		return client.ChartDiff{}, fmt.Errorf("diff %s/%s %s %s: %w", repo, name, from, to, err)
	}
	return *d, nil
}

// SearchCharts implements API.
func (a *clientAPI) SearchCharts(ctx context.Context, query string, page, limit int) ([]client.SearchResult, client.Meta, error) {
	items, resp, err := a.c.Search.Charts(ctx, query, &client.SearchOptions{ListOptions: client.ListOptions{Page: page, Limit: limit}})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("search charts: %w", err)
	}
	return values(items), meta(resp, page, limit), nil
}

// ListTeams implements API.
func (a *clientAPI) ListTeams(ctx context.Context, page, limit int) ([]client.Team, client.Meta, error) {
	items, resp, err := a.c.Teams.List(ctx, &client.TeamListOptions{ListOptions: client.ListOptions{Page: page, Limit: limit}})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("list teams: %w", err)
	}
	return values(items), meta(resp, page, limit), nil
}

// RepositoryAccess implements API.
func (a *clientAPI) RepositoryAccess(ctx context.Context, repo string, page, limit int) ([]client.Grant, client.Meta, error) {
	items, resp, err := a.c.Repositories.Access(ctx, repo, &client.ListOptions{Page: page, Limit: limit})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("list access to %s: %w", repo, err)
	}
	return values(items), meta(resp, page, limit), nil
}

// ListMembers implements API.
func (a *clientAPI) ListMembers(ctx context.Context, team string, page, limit int) ([]client.Member, client.Meta, error) {
	items, resp, err := a.c.Teams.Members(ctx, team, &client.ListOptions{Page: page, Limit: limit})
	a.observe(resp, err)
	if err != nil {
		return nil, client.Meta{}, fmt.Errorf("list members of %s: %w", team, err)
	}
	return values(items), meta(resp, page, limit), nil
}
