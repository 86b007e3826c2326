package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// SearchService finds charts (/v1/search).
type SearchService service

// SearchOptions narrows a search.
type SearchOptions struct {
	// Repository, when set, searches only that repository.
	Repository string
	// Image finds every version that deploys a matching image: no tag
	// matches every tag; a tag matches itself and the tags it prefixes
	// before a "." or "-" (nginx:1.25 matches nginx:1.25.3).
	Image string
	// Organization, Category (artifacthub.io/category), License
	// (artifacthub.io/license) and Keyword keep only matching charts.
	Organization, Category, License, Keyword string
	// Deprecated includes deprecated charts, hidden otherwise.
	Deprecated bool
	// KubeVersion keeps charts whose kubeVersion allows this Kubernetes
	// version (1.31).
	KubeVersion string
	// Signed, when set, keeps only versions whose signature verified
	// (true) or only the others (false).
	Signed *bool
	ListOptions
}

func (o *SearchOptions) filters(v url.Values) {
	for k, val := range map[string]string{"repository": o.Repository, "image": o.Image, "organization": o.Organization,
		"category": o.Category, "license": o.License, "keyword": o.Keyword, "kube_version": o.KubeVersion} {
		if val != "" {
			v.Set(k, val)
		}
	}
	if o.Deprecated {
		v.Set("deprecated", "true")
	}
	if o.Signed != nil {
		v.Set("signed", strconv.FormatBool(*o.Signed))
	}
}

// Charts returns one page of the charts whose name, description or
// keywords match q (up to 256 characters; "" with a filter in opts): the
// latest version of each (every matching version for opts.Image), name
// matches first (Page also returns the facets). Searches count against
// the "search" rate limit.
func (s *SearchService) Charts(ctx context.Context, q string, opts *SearchOptions) ([]*SearchResult, *Response, error) {
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if opts != nil {
		opts.filters(v)
		opts.values(v)
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/search", v), nil)
	if err != nil {
		return nil, nil, err
	}
	var results []*SearchResult
	resp, err := s.client.Do(ctx, req, &results)
	if err != nil {
		return nil, resp, err
	}
	return results, resp, nil
}

// All iterates over every result of a search.
func (s *SearchService) All(ctx context.Context, q string, opts SearchOptions) iter.Seq2[*SearchResult, error] {
	return paginate(ctx, opts.ListOptions, func(ctx context.Context, lo *ListOptions) ([]*SearchResult, *Response, error) {
		o := opts
		o.ListOptions = *lo
		return s.Charts(ctx, q, &o)
	})
}

// SearchPage is one page of a search with the facets of all its hits.
type SearchPage struct {
	Results []*SearchResult `json:"data"`
	Meta    Meta            `json:"meta"`
	Facets  SearchFacets    `json:"facets"`
}

// Page is Charts with the facets: every hit of the search counted by
// repository, organization, category, license and deprecated.
func (s *SearchService) Page(ctx context.Context, q string, opts *SearchOptions) (*SearchPage, *Response, error) {
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if opts != nil {
		opts.filters(v)
		opts.values(v)
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/search", v), nil)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	resp, err := s.client.Do(ctx, req, &buf)
	if err != nil {
		return nil, resp, err
	}
	page := new(SearchPage)
	if err := json.Unmarshal(buf.Bytes(), page); err != nil {
		return nil, resp, fmt.Errorf("chartctl: decode search answer: %w", err)
	}
	resp.Meta = &page.Meta
	return page, resp, nil
}
