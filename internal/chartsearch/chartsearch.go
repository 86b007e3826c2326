// Package chartsearch is the chart search of GET /v1/search and of the web
// pages' search: one implementation, so both find the same charts in the
// same order for the same caller.
package chartsearch

import (
	"context"
	"sort"
	"strings"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// Hit is a chart that matched: its latest version in one repository.
type Hit struct {
	Repository string
	Version    *chartctl.ChartVersion
	// Rank orders hits: 0 the exact name, 1 a name starting with the
	// query, 2 a name containing it, 3 a description or keyword match.
	Rank int
}

// Search finds the charts whose name, description or keywords contain q
// (case-insensitive) in the repositories p can see (only repo when it is
// not nil), the latest version of each: the exact name first, then names
// starting with q, names containing it, and description or keyword
// matches; by name, then repository, within a rank. q must already be
// validated (1–256 characters).
func Search(ctx context.Context, store chartctl.Store, p *chartctl.Principal, q string, repo *chartctl.Repository) ([]Hit, error) {
	var repos []*chartctl.Repository
	if repo != nil {
		repos = []*chartctl.Repository{repo}
	} else {
		all, err := store.Repositories(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			if p.CanSeeRepo(r) {
				repos = append(repos, r)
			}
		}
	}
	needle := strings.ToLower(strings.TrimSpace(q))
	var hits []Hit
	for _, r := range repos {
		cvs, err := store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{Latest: true})
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			// Deleted since it was listed: it has nothing to match.
			continue
		} else if err != nil {
			return nil, err
		}
		for _, cv := range cvs {
			name := strings.ToLower(cv.Name)
			rank := 3
			switch {
			case name == needle:
				rank = 0
			case strings.HasPrefix(name, needle):
				rank = 1
			case strings.Contains(name, needle):
				rank = 2
			case !strings.Contains(strings.ToLower(cv.Description), needle) && !keywordMatch(cv.Keywords, needle):
				continue
			}
			if cv, err = latestStable(ctx, store, r.Name, cv); err != nil {
				return nil, err
			}
			hits = append(hits, Hit{Repository: r.Name, Version: cv, Rank: rank})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Version.Name != b.Version.Name {
			return a.Version.Name < b.Version.Name
		}
		return a.Repository < b.Repository
	})
	return hits, nil
}

func keywordMatch(kws []string, needle string) bool {
	for _, k := range kws {
		if strings.Contains(strings.ToLower(k), needle) {
			return true
		}
	}
	return false
}

// latestStable returns the chart's latest version by the one rule the CLI,
// dashboard and TUI follow (client.Latest: the newest stable version, as
// Helm takes it): newest, the chart's newest version of any kind, when it
// is stable or the chart has only pre-releases, else the newest stable
// version. Only a chart whose newest version is a pre-release costs a
// second read.
func latestStable(ctx context.Context, store chartctl.Store, repo string, newest *chartctl.ChartVersion) (*chartctl.ChartVersion, error) {
	if !client.Prerelease(newest.Version) {
		return newest, nil
	}
	all, err := store.ChartVersions(ctx, repo, chartctl.ChartFilter{Name: newest.Name})
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return newest, nil
	} else if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, cv := range all {
		names[i] = cv.Version
	}
	latest, ok := client.Latest(names, false)
	if !ok {
		return newest, nil
	}
	for _, cv := range all {
		if cv.Version == latest {
			return cv, nil
		}
	}
	return newest, nil
}
