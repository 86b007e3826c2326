package web

import (
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartsearch"
)

// This file is the dashboard's search: the same search as GET /v1/search
// (chartsearch.ParseQuery and chartsearch.Search, one implementation), with
// its filters as a plain GET form and its facet counts as links.

// SearchResult is one chart found by a search.
type SearchResult struct {
	Repository  string
	Name        string
	Version     string
	AppVersion  string
	Description string
	Icon        template.URL
	Initial     string
	UpdatedAt   time.Time
	URL         string
	// Verified marks a version whose signature verified; Deprecated a
	// deprecated chart (shown only when asked for).
	Verified   bool
	Deprecated bool
}

// SearchFilters are the search form's filters, named as /v1/search names
// its parameters.
type SearchFilters struct {
	Repository, Organization, Category, License, Keyword, Image, KubeVersion string
	// Signed is "", "true" or "false".
	Signed string
	// Deprecated includes deprecated charts.
	Deprecated bool
}

// Any reports whether a filter is set (Deprecated alone filters nothing
// out: it lets more in).
func (f SearchFilters) Any() bool {
	return f.Repository != "" || f.Organization != "" || f.Category != "" || f.License != "" || f.Keyword != "" ||
		f.Image != "" || f.KubeVersion != "" || f.Signed != ""
}

// values returns the search's parameters: q and the filters.
func (f SearchFilters) values(q string) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("q", q)
	set("repository", f.Repository)
	set("organization", f.Organization)
	set("category", f.Category)
	set("license", f.License)
	set("keyword", f.Keyword)
	set("image", f.Image)
	set("kube_version", f.KubeVersion)
	set("signed", f.Signed)
	if f.Deprecated {
		v.Set("deprecated", "true")
	}
	return v
}

// searchFilters reads the filters of a search request.
func searchFilters(c echo.Context) SearchFilters {
	get := func(k string) string { return strings.TrimSpace(c.QueryParam(k)) }
	f := SearchFilters{Repository: get("repository"), Organization: get("organization"), Category: get("category"), License: get("license"),
		Keyword: get("keyword"), Image: get("image"), KubeVersion: get("kube_version"), Signed: get("signed")}
	f.Deprecated, _ = strconv.ParseBool(get("deprecated"))
	return f
}

// FacetGroup counts the results by one filter's values.
type FacetGroup struct {
	// Name is the filter's parameter; Label its name in words.
	Name, Label string
	Values      []FacetValue
}

// FacetValue is one value of a facet: how many results have it, and the
// search narrowed to it (or widened again, when it is the current one).
type FacetValue struct {
	Value, Label string
	Count        int
	URL          string
	Current      bool
}

// maxFacetValues is how many values of one facet the page lists.
const maxFacetValues = 12

// facetGroups turns counts into the page's facets, biggest first.
func facetGroups(q string, f SearchFilters, counts chartsearch.Facets) []FacetGroup {
	var out []FacetGroup
	add := func(name, label string, m map[string]int, current string, labelOf func(string) string) {
		if len(m) == 0 {
			return
		}
		g := FacetGroup{Name: name, Label: label}
		for v, n := range m {
			fv := FacetValue{Value: v, Label: v, Count: n, Current: strings.EqualFold(v, current)}
			if labelOf != nil {
				fv.Label = labelOf(v)
			}
			narrowed := f.values(q)
			if fv.Current {
				narrowed.Del(name)
			} else {
				narrowed.Set(name, v)
			}
			fv.URL = "/search?" + narrowed.Encode()
			g.Values = append(g.Values, fv)
		}
		sort.Slice(g.Values, func(i, j int) bool {
			a, b := g.Values[i], g.Values[j]
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			return a.Value < b.Value
		})
		if len(g.Values) > maxFacetValues {
			g.Values = g.Values[:maxFacetValues]
		}
		out = append(out, g)
	}
	add("repository", "Repository", counts.Repository, f.Repository, nil)
	add("organization", "Organization", counts.Organization, f.Organization, nil)
	add("category", "Category", counts.Category, f.Category, nil)
	add("license", "License", counts.License, f.License, nil)
	add("signed", "Signature", counts.Signed, f.Signed, func(v string) string {
		if v == "true" {
			return "Signed, verified"
		}
		return "Not verified"
	})
	if f.Deprecated {
		// Counts only: the API has no "only deprecated" filter, so these
		// values are not links.
		add("deprecated", "Deprecated", counts.Deprecated, "", func(v string) string {
			if v == "true" {
				return "Deprecated"
			}
			return "Not deprecated"
		})
		if n := len(out); n > 0 && out[n-1].Name == "deprecated" {
			for i := range out[n-1].Values {
				out[n-1].Values[i].URL = ""
			}
		}
	}
	return out
}

// SearchPage is the home page and the search results page.
type SearchPage struct {
	Query    string
	Filters  SearchFilters
	Searched bool
	Results  []SearchResult
	Total    int
	Facets   []FacetGroup
	// ImageSearch says results are versions (every version deploying the
	// image), not charts.
	ImageSearch bool
	// Page is the 1-based results page; Prev and Next are links or "".
	Page       int
	Prev, Next string
	// Problem explains a query that cannot be run.
	Problem string
}

func (d *Dashboard) handleHome(c echo.Context) error {
	if c.QueryParam("q") != "" || searchFilters(c).Any() {
		return d.handleSearch(c)
	}
	return d.render(c, http.StatusOK, "home", d.browsePage(c, "Find Helm charts", "home", "/", SearchPage{}))
}

func (d *Dashboard) handleSearch(c echo.Context) error {
	p, err := d.viewer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	q := strings.TrimSpace(c.QueryParam("q"))
	f := searchFilters(c)
	sp := SearchPage{Query: q, Filters: f, Page: 1}
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 && n < 10000 {
		sp.Page = n
	}
	status := http.StatusOK
	if q != "" || f.Any() {
		query, err := chartsearch.ParseQuery(c.QueryParam)
		if err == nil && f.Repository != "" {
			query.Repo, err = d.opts.App.VisibleRepo(ctx, p, f.Repository)
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				sp.Problem = "There is no repository named " + f.Repository + " that you can see."
				status = http.StatusNotFound
				err = nil
			}
		}
		switch {
		case chartctl.ErrorCode(err) == chartctl.EINVALID:
			sp.Problem = chartctl.ErrorMessage(err)
			status = http.StatusBadRequest
		case err != nil:
			return err
		case sp.Problem == "":
			if err := d.runSearch(c, p, query, &sp); err != nil {
				return err
			}
		}
	}
	if c.QueryParam("fragment") == "1" {
		// Search as you type asks for the results alone; their sign-in
		// link comes back to the search, not to this fragment.
		page := d.browsePage(c, "", "", "", sp)
		// Marks the answer as the results fragment: the script puts only
		// that into the results box, and a message for anything else (an
		// error page from here or from a proxy).
		c.Response().Header().Set("X-Search-Fragment", "1")
		if page.SignIn != "" {
			page.SignIn = SignInURL("/search?" + f.values(q).Encode())
		}
		return d.renderFragment(c, status, "search", "results", page)
	}
	title := "Search"
	canonical := "/search"
	if q != "" || f.Any() {
		title = "Search"
		if q != "" {
			title += ": " + q
		}
		canonical = "/search?" + f.values(q).Encode()
	}
	return d.render(c, status, "search", d.browsePage(c, title, "home", canonical, sp))
}

// runSearch runs query for p and fills sp's results, page and facets.
func (d *Dashboard) runSearch(c echo.Context, p *chartctl.Principal, query chartsearch.Query, sp *SearchPage) error {
	hits, err := chartsearch.Search(c.Request().Context(), d.opts.Store, d.opts.App.SearchCandidates, p, query)
	if err != nil {
		return err
	}
	sp.Searched = true
	sp.ImageSearch = query.Image != nil
	sp.Total = len(hits)
	sp.Facets = facetGroups(sp.Query, sp.Filters, chartsearch.Count(hits))
	from := (sp.Page - 1) * searchPerPage
	for i := from; i < len(hits) && i < from+searchPerPage; i++ {
		cv := hits[i].Version
		r := SearchResult{Repository: hits[i].Repository, Name: cv.Name, Version: cv.Version, AppVersion: cv.AppVersion,
			Description: cv.Description, UpdatedAt: cv.CreatedAt, URL: chartURL(hits[i].Repository, cv.Name, ""),
			Verified: hits[i].Meta.Signed, Deprecated: hits[i].Meta.Deprecated}
		if sp.ImageSearch {
			// Every version that deploys the image: each links to itself.
			r.URL = chartURL(hits[i].Repository, cv.Name, cv.Version)
		}
		r.Icon, r.Initial = chartIcon(cv)
		sp.Results = append(sp.Results, r)
	}
	link := func(n int) string {
		v := sp.Filters.values(sp.Query)
		v.Set("page", strconv.Itoa(n))
		return "/search?" + v.Encode()
	}
	if sp.Page > 1 {
		sp.Prev = link(sp.Page - 1)
	}
	if from+searchPerPage < len(hits) {
		sp.Next = link(sp.Page + 1)
	}
	return nil
}
