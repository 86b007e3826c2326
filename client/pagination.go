package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// ListOptions selects one page of a list. Zero values leave the choice to
// the server (page 1, 20 items).
type ListOptions struct {
	// Page is the page number, from 1.
	Page int
	// Limit is the number of items per page, 1 to 100.
	Limit int
}

// values adds the page and limit to q.
func (o ListOptions) values(q url.Values) {
	if o.Page > 0 {
		q.Set("page", strconv.Itoa(o.Page))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
}

// withQuery appends q to path when it is not empty.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// allPageLimit is the page size the iterators ask for: the contract's
// maximum, so that walking a list takes as few requests as it can.
const allPageLimit = 100

// paginate walks a list page by page, from opts.Page (or 1), yielding each
// item, until the server's meta says the last page was read. A failed
// request yields (nil, err) once and ends the walk.
func paginate[T any](ctx context.Context, opts ListOptions, fetch func(ctx context.Context, opts *ListOptions) ([]*T, *Response, error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		if opts.Page < 1 {
			opts.Page = 1
		}
		if opts.Limit < 1 {
			opts.Limit = allPageLimit
		}
		for {
			page := opts
			items, resp, err := fetch(ctx, &page)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if len(items) == 0 {
				return
			}
			if resp.Meta != nil {
				if resp.NextPage() == 0 {
					return
				}
			} else if len(items) < opts.Limit {
				return
			}
			opts.Page++
		}
	}
}

// getPage fetches one page of the list at path (a path of the API, to
// which the page and limit of opts are added).
func getPage[T any](ctx context.Context, c *Client, path string, opts *ListOptions) ([]*T, *Response, error) {
	q := url.Values{}
	if opts != nil {
		opts.values(q)
	}
	req, err := c.NewRequest(http.MethodGet, withQuery(path, q), nil)
	if err != nil {
		return nil, nil, err
	}
	var out []*T
	resp, err := c.Do(ctx, req, &out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// listAll walks every page of fetch, as paginate does, and returns the
// items with the last page's Response.
func listAll[T any](ctx context.Context, fetch func(ctx context.Context, opts *ListOptions) ([]*T, *Response, error)) ([]*T, *Response, error) {
	var last *Response
	items, err := Collect(paginate(ctx, ListOptions{}, func(ctx context.Context, opts *ListOptions) ([]*T, *Response, error) {
		page, resp, err := fetch(ctx, opts)
		last = resp
		return page, resp, err
	}))
	if err != nil {
		return nil, last, err
	}
	return items, last, nil
}

// Collect runs an iterator of the All methods to the end and returns what
// it yielded (an empty, non-nil slice for none), or the first error.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}
