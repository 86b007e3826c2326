package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// publishersPath is the path of robot name's trusted publishers, or of
// one of them when id is not empty.
func publishersPath(org, name, id string) string {
	p := robotsPath(org, name) + "/publishers"
	if id != "" {
		p += "/" + url.PathEscape(id)
	}
	return p
}

// ListPublishers returns one page of the trusted publishers of robot name
// of organization org, oldest first. It calls GET
// /v1/organizations/:org/robots/:name/publishers.
func (s *RobotsService) ListPublishers(ctx context.Context, org, name string, opts *ListOptions) ([]*Publisher, *Response, error) {
	return getPage[Publisher](ctx, s.client, publishersPath(org, name, ""), opts)
}

// AllPublishers iterates over every trusted publisher of robot name of
// organization org.
func (s *RobotsService) AllPublishers(ctx context.Context, org, name string) iter.Seq2[*Publisher, error] {
	return paginate(ctx, ListOptions{}, func(ctx context.Context, lo *ListOptions) ([]*Publisher, *Response, error) {
		return s.ListPublishers(ctx, org, name, lo)
	})
}

// AddPublisher adds a trusted publisher to robot name of organization
// org: tokens of r.Issuer for r.Audience whose claims match r.Claims are
// exchanged for the robot's short-lived credentials (ExchangeOIDCToken).
// It calls POST /v1/organizations/:org/robots/:name/publishers.
func (s *RobotsService) AddPublisher(ctx context.Context, org, name string, r *PublisherRequest) (*Publisher, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, publishersPath(org, name, ""), r)
	if err != nil {
		return nil, nil, err
	}
	var p Publisher
	resp, err := s.client.Do(ctx, req, &p)
	if err != nil {
		return nil, resp, err
	}
	return &p, resp, nil
}

// RemovePublisher removes trusted publisher id of robot name of
// organization org. It calls DELETE
// /v1/organizations/:org/robots/:name/publishers/:id.
func (s *RobotsService) RemovePublisher(ctx context.Context, org, name, id string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, publishersPath(org, name, id), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
