// Package chartsearch is the chart search of GET /v1/search and of the web
// pages' search: one implementation, so both find the same charts in the
// same order for the same caller.
package chartsearch

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
)

// Hit is a chart that matched: its latest version in one repository, or,
// for an image search, every version that deploys the image.
type Hit struct {
	Repository string
	// Organization owns Repository ("" for a personal repository).
	Organization string
	Version      *chartctl.ChartVersion
	// Rank orders hits: 0 the exact name, 1 a name starting with the
	// query, 2 a name containing it, 3 a description or keyword match;
	// 0 for every hit of a search without text.
	Rank int
	// Meta is what the filters and facets read from Chart.yaml.
	Meta Meta
}

// Meta is the part of a version's Chart.yaml search filters and counts by.
type Meta struct {
	Category    string
	License     string
	Deprecated  bool
	KubeVersion string
	// Images are the version's stored images (chartdiff.VersionImages).
	Images chartdiff.Images
	// Signed is set when a signature of the version verified against
	// its repository's or organization's trust (its verification
	// record's status is verified).
	Signed bool
}

// metaOf reads Meta from a version's stored Chart.yaml (as JSON).
func metaOf(cv *chartctl.ChartVersion) Meta {
	var md struct {
		Deprecated  bool              `json:"deprecated"`
		KubeVersion string            `json:"kubeVersion"`
		Annotations map[string]string `json:"annotations"`
	}
	_ = json.Unmarshal(cv.Metadata, &md)
	return Meta{Category: md.Annotations["artifacthub.io/category"], License: md.Annotations["artifacthub.io/license"],
		Deprecated: md.Deprecated, KubeVersion: md.KubeVersion, Images: chartdiff.VersionImages(cv),
		Signed: cv.Verification != nil && cv.Verification.Status == chartctl.VerificationVerified}
}

// Query is a search. Every field is optional; the caller requires at
// least one of Text and the filters.
type Query struct {
	// Text must be in the name, description or keywords (case-insensitive).
	Text string
	// Repo, when set, searches only that repository.
	Repo *chartctl.Repository
	// Image, when set, finds every version (not only the latest) that
	// lists a matching image.
	Image *chartdiff.ImageQuery
	// Organization, Category, License and Keyword keep charts with that
	// value (case-insensitive; Keyword is one of the chart's keywords).
	Organization, Category, License, Keyword string
	// Deprecated includes deprecated charts, hidden otherwise as helm
	// search hides them.
	Deprecated bool
	// KubeVersion keeps charts whose kubeVersion constraint allows it
	// (a chart without one allows every version).
	KubeVersion *semver.Version
	// Signed, when set, keeps only signed (true) or only unsigned
	// (false) versions: see Meta.Signed.
	Signed *bool
}

// Facets counts the hits of a search by value: repository, organization
// ("" not counted), category, license ("" not counted), deprecated and
// signed ("true"/"false"). Counts are over every hit, not one page.
type Facets struct {
	Repository   map[string]int
	Organization map[string]int
	Category     map[string]int
	License      map[string]int
	Deprecated   map[string]int
	Signed       map[string]int
}

// Count returns the facets of hits.
func Count(hits []Hit) Facets {
	f := Facets{Repository: map[string]int{}, Organization: map[string]int{}, Category: map[string]int{}, License: map[string]int{}, Deprecated: map[string]int{}, Signed: map[string]int{}}
	for _, h := range hits {
		f.Repository[h.Repository]++
		if h.Organization != "" {
			f.Organization[h.Organization]++
		}
		if h.Meta.Category != "" {
			f.Category[h.Meta.Category]++
		}
		if h.Meta.License != "" {
			f.License[h.Meta.License]++
		}
		f.Deprecated[strconv.FormatBool(h.Meta.Deprecated)]++
		f.Signed[strconv.FormatBool(h.Meta.Signed)]++
	}
	return f
}

// Candidate is what a text search looks at for one chart of a
// repository: the text is matched against its newest version, and a hit
// shows its newest stable version (the newest when none is stable), with
// that version's Meta (Shown).
type Candidate struct {
	Newest *chartctl.ChartVersion

	mu    sync.Mutex
	shown *chartctl.ChartVersion
	meta  Meta
}

// Shown returns the version a hit on c shows and its Meta. When the
// chart's newest version is a pre-release, the first call reads the
// chart's versions from store to find its newest stable one (only charts
// that match a search pay for that), and later calls reuse it.
func (c *Candidate) Shown(ctx context.Context, store chartctl.Store) (*chartctl.ChartVersion, Meta, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shown != nil {
		return c.shown, c.meta, nil
	}
	shown, err := latestStable(ctx, store, c.Newest.Repository, c.Newest)
	if err != nil {
		// Not kept: the next search tries again.
		return nil, Meta{}, err
	}
	c.shown, c.meta = shown, metaOf(shown)
	return c.shown, c.meta, nil
}

// Candidates returns the candidates of a repository: TextCandidates, or
// a cache of it (app.App keeps one, dropped on every change to the
// repository). The versions are shared: callers must not change them.
type Candidates func(ctx context.Context, repo string) ([]*Candidate, error)

// TextCandidates reads the candidates of repo from the store: one per
// chart, from the newest record of each. A missing repository has none.
func TextCandidates(ctx context.Context, store chartctl.Store, repo string) ([]*Candidate, error) {
	cvs, err := store.ChartVersions(ctx, repo, chartctl.ChartFilter{Latest: true})
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		// Deleted since it was listed: it has nothing to match.
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	out := make([]*Candidate, 0, len(cvs))
	for _, cv := range cvs {
		c := &Candidate{Newest: cv}
		if !client.Prerelease(cv.Version) {
			c.shown, c.meta = cv, metaOf(cv)
		}
		out = append(out, c)
	}
	return out, nil
}

// Search finds the charts matching q in the repositories p can see (only
// q.Repo when it is set), the latest version of each (every matching
// version for an image search): the exact name first, then names
// starting with q.Text, names containing it, and description or keyword
// matches; by name, then repository, then version (newest first) within
// a rank. q.Text must already be validated (at most 256 characters).
// cands gives each repository's text candidates; nil reads them from
// store (TextCandidates).
func Search(ctx context.Context, store chartctl.Store, cands Candidates, p *chartctl.Principal, q Query) ([]Hit, error) {
	if cands == nil {
		cands = func(ctx context.Context, repo string) ([]*Candidate, error) { return TextCandidates(ctx, store, repo) }
	}
	var repos []*chartctl.Repository
	if q.Repo != nil {
		repos = []*chartctl.Repository{q.Repo}
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
	needle := strings.ToLower(strings.TrimSpace(q.Text))
	var hits []Hit
	for _, r := range repos {
		if q.Organization != "" && !strings.EqualFold(r.Organization, q.Organization) {
			continue
		}
		if q.Image != nil {
			// An image search reads every version: an old version that
			// still deploys a vulnerable image is what it is for.
			cvs, err := store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				continue
			} else if err != nil {
				return nil, err
			}
			for _, cv := range cvs {
				rank, ok := textRank(cv, needle)
				if !ok {
					continue
				}
				if m := metaOf(cv); q.keep(cv, m) {
					hits = append(hits, Hit{Repository: r.Name, Organization: r.Organization, Version: cv, Rank: rank, Meta: m})
				}
			}
			continue
		}
		cs, err := cands(ctx, r.Name)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			rank, ok := textRank(c.Newest, needle)
			if !ok {
				continue
			}
			shown, m, err := c.Shown(ctx, store)
			if err != nil {
				return nil, err
			}
			if q.keep(shown, m) {
				hits = append(hits, Hit{Repository: r.Name, Organization: r.Organization, Version: shown, Rank: rank, Meta: m})
			}
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
		// Versions of one repository keep the store's order, newest
		// first (the sort is stable).
		return a.Repository < b.Repository
	})
	return hits, nil
}

// textRank ranks cv for the lower-cased needle; ok is false when it does
// not match. An empty needle matches everything at rank 0.
func textRank(cv *chartctl.ChartVersion, needle string) (rank int, ok bool) {
	if needle == "" {
		return 0, true
	}
	name := strings.ToLower(cv.Name)
	switch {
	case name == needle:
		return 0, true
	case strings.HasPrefix(name, needle):
		return 1, true
	case strings.Contains(name, needle):
		return 2, true
	case strings.Contains(strings.ToLower(cv.Description), needle) || keywordMatch(cv.Keywords, needle):
		return 3, true
	}
	return 0, false
}

// keep applies the filters other than text and organization.
func (q Query) keep(cv *chartctl.ChartVersion, m Meta) bool {
	if m.Deprecated && !q.Deprecated {
		return false
	}
	if q.Signed != nil && m.Signed != *q.Signed {
		return false
	}
	if q.Category != "" && !strings.EqualFold(m.Category, q.Category) {
		return false
	}
	if q.License != "" && !strings.EqualFold(m.License, q.License) {
		return false
	}
	if q.Keyword != "" && !slices.ContainsFunc(cv.Keywords, func(k string) bool { return strings.EqualFold(k, q.Keyword) }) {
		return false
	}
	if q.KubeVersion != nil && m.KubeVersion != "" {
		c, err := semver.NewConstraint(m.KubeVersion)
		// A constraint Helm could not read either keeps the chart out
		// of a compatibility search: nothing says it is compatible.
		if err != nil || !c.Check(q.KubeVersion) {
			return false
		}
	}
	if q.Image != nil && !slices.ContainsFunc(m.Images.Images, q.Image.Match) {
		return false
	}
	return true
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

// ParseQuery reads a search from request parameters (get returns a
// parameter's value, "" when absent): q, image, organization, category,
// license, keyword, deprecated (true/false), signed (true/false) and
// kube_version. Bad values
// are EINVALID naming the parameter; a search with neither q nor a filter
// is EINVALID naming q. Repo is left to the caller, who checks that the
// caller may see it.
func ParseQuery(get func(string) string) (Query, error) {
	q := Query{Text: strings.TrimSpace(get("q")), Organization: strings.TrimSpace(get("organization")),
		Category: strings.TrimSpace(get("category")), License: strings.TrimSpace(get("license")), Keyword: strings.TrimSpace(get("keyword"))}
	if utf8.RuneCountInString(q.Text) > 256 {
		return q, chartctl.Invalid("q", "q is too long: search for at most 256 characters.")
	}
	for name, v := range map[string]string{"organization": q.Organization, "category": q.Category, "license": q.License, "keyword": q.Keyword} {
		if utf8.RuneCountInString(v) > 256 {
			return q, chartctl.Invalid(name, "%s is too long: at most 256 characters.", name)
		}
	}
	if v := strings.TrimSpace(get("image")); v != "" {
		iq, err := chartdiff.ParseImageQuery(v)
		if err != nil {
			return q, chartctl.Invalid("image", "image must be an image reference such as nginx, nginx:1.25 or ghcr.io/org/app:v1 (%v).", err)
		}
		q.Image = &iq
	}
	if v := get("deprecated"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return q, chartctl.Invalid("deprecated", "deprecated must be true or false, not %q.", v)
		}
		q.Deprecated = b
	}
	if v := get("signed"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return q, chartctl.Invalid("signed", "signed must be true (only signed versions) or false (only unsigned ones), not %q.", v)
		}
		q.Signed = &b
	}
	if v := strings.TrimSpace(get("kube_version")); v != "" {
		kv, err := semver.NewVersion(v)
		if err != nil {
			return q, chartctl.Invalid("kube_version", "kube_version must be a Kubernetes version such as 1.31 or 1.31.2, not %q.", v)
		}
		q.KubeVersion = kv
	}
	if q.Text == "" && q.Image == nil && q.Organization == "" && q.Category == "" && q.License == "" && q.Keyword == "" && q.KubeVersion == nil && q.Signed == nil && get("repository") == "" {
		return q, chartctl.Invalid("q", "q is required (1 to 256 characters to search for) unless a filter is given: image, organization, category, license, keyword, kube_version, signed or repository.")
	}
	return q, nil
}
