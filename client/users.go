package client

import (
	"context"
	"iter"
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

// List returns one page of every user. Server admins only.
func (s *UsersService) List(ctx context.Context, opts *ListOptions) ([]*Account, *Response, error) {
	return getPage[Account](ctx, s.client, "v1/users", opts)
}

// All iterates over every user. Server admins only.
func (s *UsersService) All(ctx context.Context) iter.Seq2[*Account, error] {
	return paginate(ctx, ListOptions{}, s.List)
}

// Update changes the user with the given email: disable or enable them,
// make or unmake them an admin, set their password. Disabling ends every
// credential of theirs at once. Server admins only.
func (s *UsersService) Update(ctx context.Context, email string, r *UpdateUserRequest) (*Account, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPatch, "v1/users/"+url.PathEscape(email), r)
	if err != nil {
		return nil, nil, err
	}
	a := new(Account)
	resp, err := s.client.Do(ctx, req, a)
	if err != nil {
		return nil, resp, err
	}
	return a, resp, nil
}

// Delete deletes the user with the given email, their memberships and
// credentials; their personal repositories stay. Server admins only.
func (s *UsersService) Delete(ctx context.Context, email string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/users/"+url.PathEscape(email), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// ListAPIKeys returns one page of another user's API keys (without their
// values). Server admins only.
func (s *UsersService) ListAPIKeys(ctx context.Context, email string, opts *ListOptions) ([]*APIKey, *Response, error) {
	return getPage[APIKey](ctx, s.client, "v1/users/"+url.PathEscape(email)+"/api-keys", opts)
}

// RevokeAPIKey revokes another user's API key. Server admins only.
func (s *UsersService) RevokeAPIKey(ctx context.Context, email, id string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/users/"+url.PathEscape(email)+"/api-keys/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
