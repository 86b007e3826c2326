package client

import (
	"context"
	"net/http"
	"net/url"
)

// UsersService reads the caller's account (/v1/user) and lets a server
// admin create users and their API keys (/v1/users).
type UsersService service

// Me returns the account the credential belongs to, with the credential's
// scopes.
func (s *UsersService) Me(ctx context.Context) (*User, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/user", nil)
	if err != nil {
		return nil, nil, err
	}
	u := new(User)
	resp, err := s.client.Do(ctx, req, u)
	if err != nil {
		return nil, resp, err
	}
	return u, resp, nil
}

// Create creates a user. Server admins only.
func (s *UsersService) Create(ctx context.Context, r *CreateUserRequest) (*User, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/users", r)
	if err != nil {
		return nil, nil, err
	}
	u := new(User)
	resp, err := s.client.Do(ctx, req, u)
	if err != nil {
		return nil, resp, err
	}
	return u, resp, nil
}

// CreateAPIKey creates an API key for the user with the given email, such as
// a service account for CI. Server admins only. The returned key's Key field
// holds the value, shown this once.
func (s *UsersService) CreateAPIKey(ctx context.Context, email string, r *CreateAPIKeyRequest) (*APIKey, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/users/"+url.PathEscape(email)+"/api-keys", r)
	if err != nil {
		return nil, nil, err
	}
	key := new(APIKey)
	resp, err := s.client.Do(ctx, req, key)
	if err != nil {
		return nil, resp, err
	}
	return key, resp, nil
}
