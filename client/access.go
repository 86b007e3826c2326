package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// This file holds the repository access methods of RepositoriesService:
// grants of repository roles to teams and users, and the explanation of a
// user's effective role (CONTRACT §18 "Access").

// accessPath is the path of a repository's grants.
func accessPath(repo string) string {
	return "v1/repositories/" + url.PathEscape(repo) + "/access"
}

// Access returns one page of the grants on repository repo, teams and
// users alike. It calls GET /v1/repositories/:repo/access; only the
// repository's admins may list them.
func (s *RepositoriesService) Access(ctx context.Context, repo string, opts *ListOptions) ([]*Grant, *Response, error) {
	return getPage[Grant](ctx, s.client, accessPath(repo), opts)
}

// AllAccess iterates over every grant on repository repo, fetching pages
// of GET /v1/repositories/:repo/access as it goes.
func (s *RepositoriesService) AllAccess(ctx context.Context, repo string) iter.Seq2[*Grant, error] {
	return paginate(ctx, ListOptions{}, func(ctx context.Context, lo *ListOptions) ([]*Grant, *Response, error) {
		return s.Access(ctx, repo, lo)
	})
}

// Grant gives a team (r.Team, a team of the repository's organization) or
// a user (r.User, an email) the role r.Role on repository repo, replacing
// the role they had there. It calls POST /v1/repositories/:repo/access.
func (s *RepositoriesService) Grant(ctx context.Context, repo string, r *GrantRequest) (*Grant, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, accessPath(repo), r)
	if err != nil {
		return nil, nil, err
	}
	g := new(Grant)
	resp, err := s.client.Do(ctx, req, g)
	if err != nil {
		return nil, resp, err
	}
	return g, resp, nil
}

// Revoke removes the grant of kind (GrantKindTeam or GrantKindUser) to
// name (a team's name or a user's email) on repository repo. It calls
// DELETE /v1/repositories/:repo/access/:kind/:name.
func (s *RepositoriesService) Revoke(ctx context.Context, repo, kind, name string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, accessPath(repo)+"/"+url.PathEscape(kind)+"/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// Permissions returns the effective role of the user with this email on
// repository repo and each source that gives it. It calls
// GET /v1/repositories/:repo/permissions?user=EMAIL (repository admins).
func (s *RepositoriesService) Permissions(ctx context.Context, repo, email string) (*Permission, *Response, error) {
	q := url.Values{"user": {email}}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/repositories/"+url.PathEscape(repo)+"/permissions", q), nil)
	if err != nil {
		return nil, nil, err
	}
	p := new(Permission)
	resp, err := s.client.Do(ctx, req, p)
	if err != nil {
		return nil, resp, err
	}
	return p, resp, nil
}
