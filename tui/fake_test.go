package tui

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chartctl/chartctl/client"
)

// fakeAPI is an in-memory API with the server's paging and ordering. An
// error registered under "Method" or "Method:arg" is returned instead of
// data. When gate is set, every call blocks until it is closed.
type fakeAPI struct {
	mu      sync.Mutex
	repos   []client.Repository
	charts  map[string][]client.Chart // by repository, ordered by name then newest first
	teams   []client.Team
	members map[string][]client.Member
	grants  map[string][]client.Grant   // by repository, teams first
	diffs   map[string]client.ChartDiff // by "repo/name from to"
	errs    map[string]error
	calls   []string
	gate    chan struct{}
	notify  chan struct{} // receives a token for every call
}

// called returns a channel that receives a token for every call.
func (f *fakeAPI) called() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.notify == nil {
		f.notify = make(chan struct{}, 100)
	}
	return f.notify
}

var fixedTime = time.Date(2026, 1, 15, 10, 30, 0, 0, time.UTC)

func digestOf(s string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s)))
}

func strptr(s string) *string { return &s }

func chartVersion(name, version, app, desc string, keywords ...string) client.Chart {
	return client.Chart{
		Name: name, Version: version, AppVersion: app, Description: desc,
		Digest: digestOf(name + version), Size: 4096 + int64(len(name+version))*100,
		Keywords: keywords, CreatedAt: fixedTime,
	}
}

// withChartYAML adds what only the single-version endpoint returns.
func withChartYAML(c client.Chart, home string, sources []string, maintainers ...client.Maintainer) client.Chart {
	c.Home, c.Sources, c.Maintainers = home, sources, maintainers
	return c
}

// listed is c as a list endpoint returns it: without the size and the
// Chart.yaml fields only the single-version endpoint carries.
func listed(c client.Chart) client.Chart {
	c.Size, c.Home, c.Sources, c.Maintainers = 0, "", nil, nil
	return c
}

// newFakeAPI returns the fixture most tests browse.
func newFakeAPI() *fakeAPI {
	return &fakeAPI{
		repos: []client.Repository{
			{ID: "repo_1", Name: "apps", Description: "Applications of the platform team", Organization: strptr("acme"), Visibility: "public", CreatedAt: fixedTime},
			{ID: "repo_2", Name: "infra", Description: "Cluster infrastructure charts", Organization: strptr("acme"), Visibility: "private", CreatedAt: fixedTime},
			{ID: "repo_3", Name: "personal", Description: "\x1b]0;pwned\x07Evil \x1b[31mred\x1b[0m text", Visibility: "private", CreatedAt: fixedTime},
		},
		charts: map[string][]client.Chart{
			"apps": {
				chartVersion("nginx", "1.2.0", "1.25.3", "NGINX web server and reverse proxy", "web", "proxy"),
				withChartYAML(chartVersion("nginx", "1.1.0", "1.25.1", "NGINX web server and reverse proxy", "web", "proxy"),
					"https://nginx.org", []string{"https://github.com/nginx/nginx", "https://hg.nginx.org/nginx"},
					client.Maintainer{Name: "Jane Doe", Email: "jane@example.com"},
					client.Maintainer{Name: "Zoë \x1b[2JŌkami", URL: "https://zoe.example.org"}),
				chartVersion("nginx", "1.0.0", "1.24.0", "NGINX web server", "web"),
				chartVersion("redis", "7.2.0", "7.2.4", "In-memory data store", "database", "cache"),
			},
			"infra": {
				chartVersion("cert-manager", "1.14.0", "v1.14.0", "Certificate management for Kubernetes"),
				chartVersion("ingress", "4.9.0", "1.9.5", "Ingress controller"),
			},
		},
		teams: []client.Team{
			{ID: "team_1", Name: "devs", Description: "Developers", MemberCount: 1, Organization: "acme"},
			{ID: "team_2", Name: "ops", Description: "Operations", MemberCount: 0, Organization: "zeta"},
			{ID: "team_3", Name: "platform", Description: "Platform engineering", MemberCount: 3, Organization: "acme"},
		},
		members: map[string][]client.Member{
			"platform": {
				{ID: "mem_1", Email: "alice@acme.test", Role: "owner", AddedAt: fixedTime},
				{ID: "mem_2", Email: "bob@acme.test", Role: "maintainer", AddedAt: fixedTime.AddDate(0, 1, 0)},
				{ID: "mem_3", Email: "carol@acme.test", Role: "member", AddedAt: fixedTime.AddDate(0, 2, 0)},
			},
			"devs": {{ID: "mem_4", Email: "dave@acme.test", Role: "member", AddedAt: fixedTime}},
		},
		grants: map[string][]client.Grant{
			"apps": {
				{Kind: "team", Name: "platform", Role: "maintain", CreatedAt: fixedTime},
				{Kind: "team", Name: "web", Role: "write", CreatedAt: fixedTime.AddDate(0, 0, 3)},
				{Kind: "user", Name: "erin@partner.test", Role: "read", CreatedAt: fixedTime.AddDate(0, 1, 0)},
			},
		},
		errs: map[string]error{},
	}
}

// call records a call and returns its registered error, waiting for the
// gate first.
func (f *fakeAPI) call(ctx context.Context, method, arg string, page int) error {
	f.mu.Lock()
	gate := f.gate
	f.calls = append(f.calls, fmt.Sprintf("%s:%s:%d", method, arg, page))
	err := f.errs[method+":"+arg]
	if err == nil {
		err = f.errs[method]
	}
	if f.notify != nil {
		select {
		case f.notify <- struct{}{}:
		default:
		}
	}
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

// callLog returns the calls made so far.
func (f *fakeAPI) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeAPI) setErr(key string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[key] = err
}

func pageOf[T any](items []T, page, limit int) ([]T, client.Meta) {
	meta := client.Meta{Total: len(items), Page: page, Limit: limit}
	start := (page - 1) * limit
	if start >= len(items) {
		return []T{}, meta
	}
	return slices.Clone(items[start:min(start+limit, len(items))]), meta
}

func (f *fakeAPI) ListRepositories(ctx context.Context, page, limit int) ([]client.Repository, client.Meta, error) {
	if err := f.call(ctx, "ListRepositories", "", page); err != nil {
		return nil, client.Meta{}, err
	}
	items, meta := pageOf(f.repos, page, limit)
	return items, meta, nil
}

func (f *fakeAPI) ListCharts(ctx context.Context, repo string, page, limit int) ([]client.Chart, client.Meta, error) {
	if err := f.call(ctx, "ListCharts", repo, page); err != nil {
		return nil, client.Meta{}, err
	}
	// The list does not carry sizes; the version's own endpoint does.
	var all []client.Chart
	for _, c := range f.charts[repo] {
		all = append(all, listed(c))
	}
	items, meta := pageOf(all, page, limit)
	return items, meta, nil
}

func (f *fakeAPI) ChartVersions(ctx context.Context, repo, name string, page, limit int) ([]client.Chart, client.Meta, error) {
	if err := f.call(ctx, "ChartVersions", repo+"/"+name, page); err != nil {
		return nil, client.Meta{}, err
	}
	var versions []client.Chart
	for _, c := range f.charts[repo] {
		if c.Name == name {
			versions = append(versions, listed(c))
		}
	}
	items, meta := pageOf(versions, page, limit)
	return items, meta, nil
}

func (f *fakeAPI) ChartVersion(ctx context.Context, repo, name, version string) (client.Chart, error) {
	if err := f.call(ctx, "ChartVersion", repo+"/"+name+"/"+version, 0); err != nil {
		return client.Chart{}, err
	}
	for _, c := range f.charts[repo] {
		if c.Name == name && c.Version == version {
			return c, nil
		}
	}
	return client.Chart{}, &client.Error{StatusCode: 404, Code: client.CodeNotFound, Message: "chart version not found"}
}

func (f *fakeAPI) SearchCharts(ctx context.Context, query string, page, limit int) ([]client.SearchResult, client.Meta, error) {
	if err := f.call(ctx, "SearchCharts", query, page); err != nil {
		return nil, client.Meta{}, err
	}
	var found []client.SearchResult
	for _, r := range f.repos {
		seen := map[string]bool{}
		for _, c := range f.charts[r.Name] {
			text := strings.ToLower(c.Name + " " + c.Description + " " + strings.Join(c.Keywords, " "))
			if seen[c.Name] || !strings.Contains(text, strings.ToLower(query)) {
				continue
			}
			seen[c.Name] = true
			found = append(found, client.SearchResult{
				Repository: r.Name, Name: c.Name, Version: c.Version, AppVersion: c.AppVersion,
				Description: c.Description, Keywords: c.Keywords, Digest: c.Digest, CreatedAt: c.CreatedAt,
			})
		}
	}
	items, meta := pageOf(found, page, limit)
	return items, meta, nil
}

func (f *fakeAPI) ListTeams(ctx context.Context, page, limit int) ([]client.Team, client.Meta, error) {
	if err := f.call(ctx, "ListTeams", "", page); err != nil {
		return nil, client.Meta{}, err
	}
	items, meta := pageOf(f.teams, page, limit)
	return items, meta, nil
}

func (f *fakeAPI) ListMembers(ctx context.Context, team string, page, limit int) ([]client.Member, client.Meta, error) {
	if err := f.call(ctx, "ListMembers", team, page); err != nil {
		return nil, client.Meta{}, err
	}
	items, meta := pageOf(f.members[team], page, limit)
	return items, meta, nil
}

func (f *fakeAPI) RepositoryAccess(ctx context.Context, repo string, page, limit int) ([]client.Grant, client.Meta, error) {
	if err := f.call(ctx, "RepositoryAccess", repo, page); err != nil {
		return nil, client.Meta{}, err
	}
	items, meta := pageOf(f.grants[repo], page, limit)
	return items, meta, nil
}

func (f *fakeAPI) Diff(ctx context.Context, repo, name, from, to string) (client.ChartDiff, error) {
	k := repo + "/" + name + " " + from + " " + to
	if err := f.call(ctx, "Diff", k, 0); err != nil {
		return client.ChartDiff{}, err
	}
	if d, ok := f.diffs[k]; ok {
		return d, nil
	}
	return client.ChartDiff{}, &client.Error{StatusCode: 404, Code: client.CodeNotFound, Message: "chart version not found"}
}

func (f *fakeAPI) RateLimit() (remaining, limit int, ok bool) {
	return 4990, 5000, true
}
