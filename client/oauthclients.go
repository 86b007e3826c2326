package client

import (
	"context"
	"net/http"
)

// OAuthClientsService registers OAuth clients (/v1/oauth-clients).
type OAuthClientsService service

// Create registers an OAuth client. Server admins only. A confidential
// client's ClientSecret is in this answer only.
func (s *OAuthClientsService) Create(ctx context.Context, r *CreateOAuthClientRequest) (*OAuthClient, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/oauth-clients", r)
	if err != nil {
		return nil, nil, err
	}
	oc := new(OAuthClient)
	resp, err := s.client.Do(ctx, req, oc)
	if err != nil {
		return nil, resp, err
	}
	return oc, resp, nil
}
