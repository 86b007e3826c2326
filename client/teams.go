package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// TeamsService manages teams and their members (/v1/teams).
type TeamsService service

// TeamListOptions filters the team list.
type TeamListOptions struct {
	// Organization, when set, keeps only that organization's teams.
	Organization string
	ListOptions
}

// List returns one page of the teams the caller can see, by name. An
// unknown or invisible organization filter is a 404.
func (s *TeamsService) List(ctx context.Context, opts *TeamListOptions) ([]*Team, *Response, error) {
	q := url.Values{}
	if opts != nil {
		if opts.Organization != "" {
			q.Set("organization", opts.Organization)
		}
		opts.values(q)
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/teams", q), nil)
	if err != nil {
		return nil, nil, err
	}
	var teams []*Team
	resp, err := s.client.Do(ctx, req, &teams)
	if err != nil {
		return nil, resp, err
	}
	return teams, resp, nil
}

// All iterates over every team the caller can see, filtered as opts says
// (its page and limit are where the walk starts and its page size).
func (s *TeamsService) All(ctx context.Context, opts TeamListOptions) iter.Seq2[*Team, error] {
	return paginate(ctx, opts.ListOptions, func(ctx context.Context, lo *ListOptions) ([]*Team, *Response, error) {
		o := opts
		o.ListOptions = *lo
		return s.List(ctx, &o)
	})
}

// Get returns the team named name.
func (s *TeamsService) Get(ctx context.Context, name string) (*Team, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/teams/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, nil, err
	}
	team := new(Team)
	resp, err := s.client.Do(ctx, req, team)
	if err != nil {
		return nil, resp, err
	}
	return team, resp, nil
}

// Create creates a team in an organization.
func (s *TeamsService) Create(ctx context.Context, r *CreateTeamRequest) (*Team, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/teams", r)
	if err != nil {
		return nil, nil, err
	}
	team := new(Team)
	resp, err := s.client.Do(ctx, req, team)
	if err != nil {
		return nil, resp, err
	}
	return team, resp, nil
}

// Update changes a team: PATCH /v1/teams/:team. Binding it to identity
// provider groups removes the members added by hand; an empty list
// unbinds it.
func (s *TeamsService) Update(ctx context.Context, name string, r *UpdateTeamRequest) (*Team, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPatch, "v1/teams/"+url.PathEscape(name), r)
	if err != nil {
		return nil, nil, err
	}
	team := new(Team)
	resp, err := s.client.Do(ctx, req, team)
	if err != nil {
		return nil, resp, err
	}
	return team, resp, nil
}

// Members returns one page of a team's members.
func (s *TeamsService) Members(ctx context.Context, team string, opts *ListOptions) ([]*Member, *Response, error) {
	return getPage[Member](ctx, s.client, "v1/teams/"+url.PathEscape(team)+"/members", opts)
}

// AllMembers iterates over every member of a team.
func (s *TeamsService) AllMembers(ctx context.Context, team string) iter.Seq2[*Member, error] {
	return paginate(ctx, ListOptions{}, func(ctx context.Context, lo *ListOptions) ([]*Member, *Response, error) {
		return s.Members(ctx, team, lo)
	})
}

// AddMember adds a member to a team by email, with role "member" unless
// another is given. An email with no account yet is recorded and takes
// effect when the account exists. An existing member is a 409.
func (s *TeamsService) AddMember(ctx context.Context, team string, r *AddMemberRequest) (*Member, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/teams/"+url.PathEscape(team)+"/members", r)
	if err != nil {
		return nil, nil, err
	}
	m := new(Member)
	resp, err := s.client.Do(ctx, req, m)
	if err != nil {
		return nil, resp, err
	}
	return m, resp, nil
}

// UpdateMember changes a member's role; member is the member's id or email.
func (s *TeamsService) UpdateMember(ctx context.Context, team, member string, r *UpdateMemberRequest) (*Member, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPatch, "v1/teams/"+url.PathEscape(team)+"/members/"+url.PathEscape(member), r)
	if err != nil {
		return nil, nil, err
	}
	m := new(Member)
	resp, err := s.client.Do(ctx, req, m)
	if err != nil {
		return nil, resp, err
	}
	return m, resp, nil
}

// RemoveMember removes a member from a team; member is the member's id or
// email.
func (s *TeamsService) RemoveMember(ctx context.Context, team, member string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/teams/"+url.PathEscape(team)+"/members/"+url.PathEscape(member), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
