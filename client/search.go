package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// SearchService finds charts (/v1/search).
type SearchService service

// SearchOptions narrows a search.
type SearchOptions struct {
	// Repository, when set, searches only that repository.
	Repository string
	ListOptions
}

// Charts returns one page of the charts whose name, description or
// keywords match q (1 to 256 characters): the latest version of each, name
// matches first. Searches count against the "search" rate limit.
func (s *SearchService) Charts(ctx context.Context, q string, opts *SearchOptions) ([]*SearchResult, *Response, error) {
	v := url.Values{}
	v.Set("q", q)
	if opts != nil {
		if opts.Repository != "" {
			v.Set("repository", opts.Repository)
		}
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
