package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// OrganizationsService lists, creates and deletes organizations
// (/v1/organizations).
type OrganizationsService service

// List returns one page of the organizations the caller can see, by name.
func (s *OrganizationsService) List(ctx context.Context, opts *ListOptions) ([]*Organization, *Response, error) {
	return getPage[Organization](ctx, s.client, "v1/organizations", opts)
}

// All iterates over every organization the caller can see.
func (s *OrganizationsService) All(ctx context.Context) iter.Seq2[*Organization, error] {
	return paginate(ctx, ListOptions{}, s.List)
}

// Create creates an organization; the caller becomes its owner.
func (s *OrganizationsService) Create(ctx context.Context, r *CreateOrganizationRequest) (*Organization, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/organizations", r)
	if err != nil {
		return nil, nil, err
	}
	org := new(Organization)
	resp, err := s.client.Do(ctx, req, org)
	if err != nil {
		return nil, resp, err
	}
	return org, resp, nil
}

// Delete deletes organization org with its teams, robots and everything
// bound to it. The server refuses it (409) while the organization owns
// repositories. It calls DELETE /v1/organizations/:org (owners and server
// admins).
func (s *OrganizationsService) Delete(ctx context.Context, org string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/organizations/"+url.PathEscape(org), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
