package client

import (
	"context"
	"net/http"
	"net/url"
)

// RateLimitService reports rate limits (/v1/rate-limit).
type RateLimitService service

// Get returns the caller's rate-limit buckets ("global", "search"), and,
// when repository is not empty, that repository's "upload" bucket. The
// request itself is not counted.
func (s *RateLimitService) Get(ctx context.Context, repository string) (*RateLimits, *Response, error) {
	q := url.Values{}
	if repository != "" {
		q.Set("repository", repository)
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/rate-limit", q), nil)
	if err != nil {
		return nil, nil, err
	}
	limits := new(RateLimits)
	resp, err := s.client.Do(ctx, req, limits)
	if err != nil {
		return nil, resp, err
	}
	return limits, resp, nil
}
