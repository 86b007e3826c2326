package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// RepositoriesService manages chart repositories (/v1/repositories).
type RepositoriesService service

// List returns one page of the repositories the caller can read, by name.
func (s *RepositoriesService) List(ctx context.Context, opts *ListOptions) ([]*Repository, *Response, error) {
	return getPage[Repository](ctx, s.client, "v1/repositories", opts)
}

// All iterates over every repository the caller can read, fetching pages
// as it goes. An error ends the iteration.
func (s *RepositoriesService) All(ctx context.Context) iter.Seq2[*Repository, error] {
	return paginate(ctx, ListOptions{}, s.List)
}

// Get returns the repository named name.
func (s *RepositoriesService) Get(ctx context.Context, name string) (*Repository, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/repositories/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, nil, err
	}
	repo := new(Repository)
	resp, err := s.client.Do(ctx, req, repo)
	if err != nil {
		return nil, resp, err
	}
	return repo, resp, nil
}

// Create creates a repository. Without an organization it belongs to the
// caller; visibility is "private" unless "public" is asked for.
func (s *RepositoriesService) Create(ctx context.Context, r *CreateRepositoryRequest) (*Repository, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/repositories", r)
	if err != nil {
		return nil, nil, err
	}
	repo := new(Repository)
	resp, err := s.client.Do(ctx, req, repo)
	if err != nil {
		return nil, resp, err
	}
	return repo, resp, nil
}

// Update changes a repository's description, visibility or, for a
// mirror, its upstream settings (the non-nil fields of r).
func (s *RepositoriesService) Update(ctx context.Context, name string, r *UpdateRepositoryRequest) (*Repository, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPatch, "v1/repositories/"+url.PathEscape(name), r)
	if err != nil {
		return nil, nil, err
	}
	repo := new(Repository)
	resp, err := s.client.Do(ctx, req, repo)
	if err != nil {
		return nil, resp, err
	}
	return repo, resp, nil
}

// Sync starts a sync of the mirror repository name from its upstream now
// and returns the repository, its mirror status "syncing" (the sync runs
// on in the server). Poll Get to see it finish.
func (s *RepositoriesService) Sync(ctx context.Context, name string) (*Repository, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/repositories/"+url.PathEscape(name)+"/sync", nil)
	if err != nil {
		return nil, nil, err
	}
	repo := new(Repository)
	resp, err := s.client.Do(ctx, req, repo)
	if err != nil {
		return nil, resp, err
	}
	return repo, resp, nil
}

// Delete deletes the repository named name and all its charts.
func (s *RepositoriesService) Delete(ctx context.Context, name string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/repositories/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// PurgeCache deletes what the proxy repository name has cached: every
// version (chart ""), every version of chart (version ""), or one
// version; the upstream's index is fetched again on the next request.
// It returns the versions deleted.
func (s *RepositoriesService) PurgeCache(ctx context.Context, name, chart, version string) (*PurgeCacheResult, *Response, error) {
	q := url.Values{}
	if chart != "" {
		q.Set("chart", chart)
	}
	if version != "" {
		q.Set("version", version)
	}
	u := "v1/repositories/" + url.PathEscape(name) + "/cache"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := s.client.NewRequest(http.MethodDelete, u, nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(PurgeCacheResult)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
